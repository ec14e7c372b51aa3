# Tests that drive the built `tensorkit` binary (standard-library Python only).
if(TARGET tensorkit_tool)
  add_test(NAME tools.tensorkit_cli
           COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/tool_test.py
                   --tool $<TARGET_FILE:tensorkit_tool>)
  set_tests_properties(tools.tensorkit_cli PROPERTIES LABELS tools)
endif()
