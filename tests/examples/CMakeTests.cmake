# Every example program runs to completion (the README's tour is examples/tour.cc).
if(TENSORKIT_BUILD_TOOLS)
  file(GLOB example_sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.cc)
  foreach(src ${example_sources})
    get_filename_component(stem ${src} NAME_WE)
    add_test(NAME examples.${stem} COMMAND example_${stem})
    set_tests_properties(examples.${stem} PROPERTIES LABELS examples)
  endforeach()
endif()
