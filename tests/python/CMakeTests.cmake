# The Python package's tests (tests/python/test_*.py): pytest in the venv the module was built
# against, importing the package from build/python. Without that venv they skip, saying how to
# get it.
if(TARGET tensorkit_python)
  add_test(NAME python COMMAND ${TENSORKIT_PYTHON} -m pytest -q -p no:cacheprovider
                               ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(python PROPERTIES LABELS python TIMEOUT 600 RUN_SERIAL ON
    ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;PYTHONDONTWRITEBYTECODE=1")
elseif(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  add_test(NAME python COMMAND sh -c
    "echo 'python: SKIPPED, the tensorkit Python module is not built (no venv .venvs/python with nanobind; make python makes it)'; exit 77")
  set_tests_properties(python PROPERTIES LABELS python SKIP_RETURN_CODE 77)
endif()
