# Round trips with the real NumPy and SciPy (Debian's /usr/bin/python3); skipped (exit 77) when
# they are missing.
if(TARGET tensorkit_tool)
  add_test(NAME io.numpy_scipy_roundtrip
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/numpy_scipy_roundtrip.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(io.numpy_scipy_roundtrip PROPERTIES LABELS io SKIP_RETURN_CODE 77)
  # The same with SciPy 1.17 from PyPI (the Python package's venv, .venvs/python, which
  # `make test` makes), whose load_npz and save_npz the .npz writer matches; skipped (exit 77)
  # without the venv.
  add_test(NAME io.numpy_scipy_roundtrip_scipy117
           COMMAND sh -c "if [ -x '${CMAKE_SOURCE_DIR}/.venvs/python/bin/python' ]; then exec '${CMAKE_SOURCE_DIR}/.venvs/python/bin/python' '${CMAKE_CURRENT_LIST_DIR}/numpy_scipy_roundtrip.py' --tool '$<TARGET_FILE:tensorkit_tool>'; else echo 'io.numpy_scipy_roundtrip_scipy117: SKIPPED, no .venvs/python (make python-venv installs SciPy 1.17)'; exit 77; fi")
  set_tests_properties(io.numpy_scipy_roundtrip_scipy117 PROPERTIES LABELS io
                       SKIP_RETURN_CODE 77)
endif()

# libsvm files against scikit-learn's reader and writer (Debian's python3-sklearn); skipped
# (exit 77) without it.
if(TARGET tensorkit_tool)
  add_test(NAME io.sklearn_libsvm
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/sklearn_libsvm.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(io.sklearn_libsvm PROPERTIES LABELS io SKIP_RETURN_CODE 77)
endif()

# The Arrow C Data Interface against pyarrow (from PyPI, in .venvs/arrow: `make arrow-venv`), over
# a test-only C ABI library loaded by ctypes. Not in sanitizer builds (a plain Python cannot load
# an ASan library); skipped (exit 77) without the venv.
if(NOT CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  add_library(tensorkit_arrow_capi SHARED ${CMAKE_CURRENT_LIST_DIR}/arrow_capi.cc)
  target_link_libraries(tensorkit_arrow_capi PRIVATE tensorkit::tensorkit)
  set_target_properties(tensorkit_arrow_capi PROPERTIES POSITION_INDEPENDENT_CODE ON)
  add_test(NAME io.pyarrow
           COMMAND sh -c "if [ -x '${CMAKE_SOURCE_DIR}/.venvs/arrow/bin/python' ]; then exec '${CMAKE_SOURCE_DIR}/.venvs/arrow/bin/python' '${CMAKE_CURRENT_LIST_DIR}/pyarrow_test.py' --lib '$<TARGET_FILE:tensorkit_arrow_capi>'; else echo 'io.pyarrow: SKIPPED, no .venvs/arrow (make arrow-venv installs pyarrow)'; exit 77; fi")
  set_tests_properties(io.pyarrow PROPERTIES LABELS io SKIP_RETURN_CODE 77)
endif()
