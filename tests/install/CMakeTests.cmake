# The installed package works for a consumer (find_package + tensorkit::tensorkit).
add_test(NAME install.consumer
         COMMAND ${CMAKE_SOURCE_DIR}/tests/install/install_test.sh ${CMAKE_BINARY_DIR}
                 ${CMAKE_SOURCE_DIR})
set_tests_properties(install.consumer PROPERTIES LABELS "install;slow")
