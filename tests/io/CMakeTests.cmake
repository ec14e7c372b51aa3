# Round trips with the real NumPy and SciPy (Debian's /usr/bin/python3); skipped (exit 77) when
# they are missing.
if(TARGET tensorkit_tool)
  add_test(NAME io.numpy_scipy_roundtrip
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/numpy_scipy_roundtrip.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(io.numpy_scipy_roundtrip PROPERTIES LABELS io SKIP_RETURN_CODE 77)
endif()

# libsvm files against scikit-learn's reader and writer (Debian's python3-sklearn); skipped
# (exit 77) without it.
if(TARGET tensorkit_tool)
  add_test(NAME io.sklearn_libsvm
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/sklearn_libsvm.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(io.sklearn_libsvm PROPERTIES LABELS io SKIP_RETURN_CODE 77)
endif()
