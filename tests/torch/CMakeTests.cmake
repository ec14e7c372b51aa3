# The PyTorch operator library's tests (embed/torch/, python/tensorkit/torch.py): one ctest per
# tests/torch/test_*.py, run by pytest in the venv the library was built against, with the
# package from the build tree. Without the library or the package they skip, saying how to get
# them.
file(GLOB torch_test_files CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.py)
if(TARGET tensorkit_torch_ops AND TARGET tensorkit_python)
  foreach(file ${torch_test_files})
    get_filename_component(stem ${file} NAME_WE)
    string(REGEX REPLACE "^test_" "" name ${stem})
    add_test(NAME ${name}
             COMMAND ${TENSORKIT_TORCH_PYTHON} -m pytest -q -p no:cacheprovider ${file})
    set_tests_properties(${name} PROPERTIES LABELS torch TIMEOUT 900 RUN_SERIAL ON
      ENVIRONMENT "TENSORKIT_TORCH_OPS=$<TARGET_FILE:tensorkit_torch_ops>;PYTHONPATH=${CMAKE_BINARY_DIR}/python")
  endforeach()
elseif(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  if(TARGET tensorkit_torch_ops)
    set(_why "the Python package is not built (no .venvs/python; make python-venv makes it)")
  else()
    set(_why "libtensorkit_torch_ops.so is not built (no torch in .venvs/torch; make torch-ops installs it)")
  endif()
  add_test(NAME torch_ops COMMAND sh -c "echo 'torch_ops: SKIPPED, ${_why}'; exit 77")
  set_tests_properties(torch_ops PROPERTIES LABELS torch SKIP_RETURN_CODE 77)
endif()
