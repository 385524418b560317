# stablert_library(<layer> DEPS <targets>): one static library per src/<layer>/ folder,
# built from every .cc in it except *_test.cc, with the project's include root src/.
function(stablert_library layer)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/${layer}/*.cc")
  list(FILTER sources EXCLUDE REGEX "_(test|benchmark|fuzz)\\.cc$")
  if(sources)
    add_library(stablert_${layer} STATIC ${sources})
    target_include_directories(stablert_${layer} PUBLIC "${CMAKE_SOURCE_DIR}/src")
    target_link_libraries(stablert_${layer} PUBLIC ${ARG_DEPS})
  else()
    add_library(stablert_${layer} INTERFACE)
    target_include_directories(stablert_${layer} INTERFACE "${CMAKE_SOURCE_DIR}/src")
    target_link_libraries(stablert_${layer} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# stablert_layer_tests(<layer> DEPS <targets>): one GoogleTest binary per layer from its
# *_test.cc files (and those of its sub-folders), registered with CTest.
function(stablert_layer_tests layer)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB tests CONFIGURE_DEPENDS "${CMAKE_SOURCE_DIR}/src/${layer}/*_test.cc"
       "${CMAKE_SOURCE_DIR}/src/${layer}/*/*_test.cc")
  if(NOT tests)
    return()
  endif()
  add_executable(${layer}_test ${tests})
  target_link_libraries(${layer}_test PRIVATE stablert_${layer} ${ARG_DEPS} GTest::gtest_main)
  gtest_discover_tests(${layer}_test DISCOVERY_TIMEOUT 60)
endfunction()
