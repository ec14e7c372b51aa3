# The TensorFlow op library's tests (tests/embed/test_tf_*.py), run by pytest in the venv that
# the library was built against. Without that library they skip, saying how to get it.
if(TARGET tensorkit_tf_ops)
  add_test(NAME tf_ops COMMAND ${TENSORKIT_TF_PYTHON} -m pytest -q -p no:cacheprovider
                               ${CMAKE_CURRENT_LIST_DIR}/test_tf_ops.py)
  set_tests_properties(tf_ops PROPERTIES LABELS embed TIMEOUT 900 RUN_SERIAL ON
    ENVIRONMENT "TENSORKIT_TF_OPS=$<TARGET_FILE:tensorkit_tf_ops>;TF_CPP_MIN_LOG_LEVEL=2")
  add_test(NAME tf_feature_ops COMMAND ${TENSORKIT_TF_PYTHON} -m pytest -q -p no:cacheprovider
                                       ${CMAKE_CURRENT_LIST_DIR}/test_tf_feature_ops.py)
  set_tests_properties(tf_feature_ops PROPERTIES LABELS embed TIMEOUT 900 RUN_SERIAL ON
    ENVIRONMENT "TENSORKIT_TF_OPS=$<TARGET_FILE:tensorkit_tf_ops>;TF_CPP_MIN_LOG_LEVEL=2")
  add_test(NAME tf_count_ops COMMAND ${TENSORKIT_TF_PYTHON} -m pytest -q -p no:cacheprovider
                                     ${CMAKE_CURRENT_LIST_DIR}/test_tf_count_ops.py)
  set_tests_properties(tf_count_ops PROPERTIES LABELS embed TIMEOUT 900 RUN_SERIAL ON
    ENVIRONMENT "TENSORKIT_TF_OPS=$<TARGET_FILE:tensorkit_tf_ops>;TF_CPP_MIN_LOG_LEVEL=2")
elseif(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  add_test(NAME tf_ops COMMAND sh -c
    "echo 'tf_ops: SKIPPED, libtensorkit_tf_ops.so is not built (no tensorflow-cpu wheel in .venvs/tf; make tf-ops installs it)'; exit 77")
  set_tests_properties(tf_ops PROPERTIES LABELS embed SKIP_RETURN_CODE 77)
endif()
