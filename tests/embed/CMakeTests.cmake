# The TensorFlow op library's tests: one ctest per tests/embed/test_tf_*.py (test_tf_ops.py is
# `tf_ops`), run by pytest in the venv that the library was built against. Without that library
# they skip, saying how to get it.
file(GLOB tf_test_files CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_tf_*.py)
if(TARGET tensorkit_tf_ops)
  foreach(file ${tf_test_files})
    get_filename_component(stem ${file} NAME_WE)
    string(REGEX REPLACE "^test_" "" name ${stem})
    add_test(NAME ${name} COMMAND ${TENSORKIT_TF_PYTHON} -m pytest -q -p no:cacheprovider ${file})
    set_tests_properties(${name} PROPERTIES LABELS embed TIMEOUT 900 RUN_SERIAL ON
      ENVIRONMENT "TENSORKIT_TF_OPS=$<TARGET_FILE:tensorkit_tf_ops>;TF_CPP_MIN_LOG_LEVEL=2")
  endforeach()
elseif(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  add_test(NAME tf_ops COMMAND sh -c
    "echo 'tf_ops: SKIPPED, libtensorkit_tf_ops.so is not built (no tensorflow-cpu wheel in .venvs/tf; make tf-ops installs it)'; exit 77")
  set_tests_properties(tf_ops PROPERTIES LABELS embed SKIP_RETURN_CODE 77)
endif()

# The tool against TensorFlow itself, needing the tool and the TensorFlow venv but not the op
# library: `tensorkit vocab` against Keras's StringLookup / IntegerLookup (keras_vocab), and
# `tensorkit convert FILE.tfrecord OUT.npz` against tf.io.parse_example (convert_tfrecord).
if(TARGET tensorkit_tool AND EXISTS "${TENSORKIT_TF_PYTHON}" AND NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  foreach(name keras_vocab convert_tfrecord)
    add_test(NAME ${name} COMMAND ${TENSORKIT_TF_PYTHON} -m pytest -q -p no:cacheprovider
                                  ${CMAKE_CURRENT_LIST_DIR}/test_${name}.py)
    set_tests_properties(${name} PROPERTIES LABELS embed TIMEOUT 600
      ENVIRONMENT "TENSORKIT_TOOL=$<TARGET_FILE:tensorkit_tool>;TF_CPP_MIN_LOG_LEVEL=2")
  endforeach()
endif()
