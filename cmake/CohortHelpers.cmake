# Shared warning flags and the two helpers every area uses.

set(COHORT_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
if(COHORT_WERROR)
  list(APPEND COHORT_WARNINGS -Werror)
endif()

if(COHORT_SANITIZE)
  string(REPLACE ";" "," _san "${COHORT_SANITIZE}")
  add_compile_options(-fsanitize=${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_san})
endif()

# cohort_add_library(<area> [SOURCES ...] DEPS ...): the static library cohort_<area> from
# every *.cpp in the area's folder plus SOURCES (subfolders), include paths rooted at src/.
function(cohort_add_library area)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(cohort_${area} STATIC ${_srcs} ${ARG_SOURCES})
  target_include_directories(cohort_${area} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(cohort_${area} PRIVATE ${COHORT_WARNINGS})
  target_link_libraries(cohort_${area} PUBLIC ${ARG_DEPS})
endfunction()

# cohort_add_test(<area> [RUNS_BINARY] LABELS ... DEPS ...): one GoogleTest binary per area, built from
# every *_test.cpp in tests/<area>/ so that no test file drops out unnoticed.
function(cohort_add_test area)
  cmake_parse_arguments(ARG "RUNS_BINARY" "" "LABELS;DEPS" ${ARGN})
  file(GLOB _srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  if(NOT _srcs)
    return()
  endif()
  add_executable(${area}_test ${_srcs})
  target_compile_options(${area}_test PRIVATE ${COHORT_WARNINGS})
  target_include_directories(${area}_test PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${area}_test PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${area}_test PRIVATE
    COHORT_SHARED_DATA="${PROJECT_SOURCE_DIR}/../shared/data"
    COHORT_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    COHORT_BINARY="$<TARGET_FILE:cohort>")
  if(ARG_RUNS_BINARY)
    add_dependencies(${area}_test cohort)  # the tests start the `cohort` binary
  endif()
  add_test(NAME ${area} COMMAND ${area}_test)
  set_tests_properties(${area} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT 1200)
endfunction()
