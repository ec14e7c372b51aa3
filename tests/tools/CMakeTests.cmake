# Tests that drive the built `tensorkit` binary (standard-library Python only).
if(TARGET tensorkit_tool)
  add_test(NAME tools.tensorkit_cli
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/tool_test.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(tools.tensorkit_cli PROPERTIES LABELS tools)
  add_test(NAME tools.vocab
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/vocab_test.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(tools.vocab PROPERTIES LABELS tools)
endif()

# Batch conversion beyond one process; the Dask driver needs the venv that `make test` creates
# (.venvs/dask) and is reported as skipped (exit 77) without it.
if(TARGET tensorkit_tool)
  add_test(NAME tools.batch
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/batch_test.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  add_test(NAME tools.dask_driver
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/batch_test.py
                   --tool $<TARGET_FILE:tensorkit_tool>
                   --dask-python ${CMAKE_SOURCE_DIR}/.venvs/dask/bin/python)
  set_tests_properties(tools.batch tools.dask_driver PROPERTIES LABELS tools)
  set_tests_properties(tools.dask_driver PROPERTIES SKIP_RETURN_CODE 77)
endif()

# `info --rows` against NumPy and `spy` pictures (Debian's /usr/bin/python3 with python3-numpy and
# python3-scipy); skipped (exit 77) without them.
if(TARGET tensorkit_tool)
  add_test(NAME tools.info_rows
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/rows_test.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  add_test(NAME tools.spy
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/spy_test.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(tools.info_rows tools.spy PROPERTIES LABELS tools SKIP_RETURN_CODE 77)
endif()

# A small soak of the batch tool (make soak runs the full one): 4 shards killed and resumed.
if(TARGET tensorkit_tool)
  add_test(NAME tools.batch_soak
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/soak_batch.py
                   --tool $<TARGET_FILE:tensorkit_tool> --small 10000 --large 3
                   --large-entries 100000 --kills 6 --kill-every 0.04)
  set_tests_properties(tools.batch_soak PROPERTIES LABELS tools TIMEOUT 600)
endif()

# `make run`'s script (examples/run.sh) on the bundled samples: every conversion, validation,
# `info` and `spy` of the main job must succeed, so a failing `make run` fails the tests too.
if(TARGET tensorkit_tool AND TARGET example_quickstart AND TARGET example_feature_pipeline)
  add_test(NAME tools.make_run
           COMMAND bash ${CMAKE_SOURCE_DIR}/examples/run.sh $<TARGET_FILE_DIR:tensorkit_tool>)
  set_tests_properties(tools.make_run PROPERTIES LABELS tools TIMEOUT 300)
endif()
