# Helpers that give every target of ours the same flags. Third-party code is
# never compiled with our warnings.

# Warnings as errors on our own code only.
function(rnode_target_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
                         -Wno-unused-parameter)
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()

# The process allocator (docs/adr/0007-jemalloc.md) for an executable of
# ours: jemalloc unless RNODE_JEMALLOC is off (sanitizer presets).
function(rnode_link_allocator target)
  if(RNODE_JEMALLOC)
    target_link_libraries(${target} PRIVATE PkgConfig::JEMALLOC)
    target_compile_definitions(${target} PRIVATE RNODE_JEMALLOC=1)
  endif()
endfunction()

# rnode_library(NAME SOURCES ... DEPS ... PRIVATE_DEPS ...)
function(rnode_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  rnode_target_flags(${name})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
endfunction()

# rnode_test(NAME LABELS ... SOURCES ... DEPS ...): one GoogleTest binary,
# each test registered with ctest under the given labels.
function(rnode_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  rnode_target_flags(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gmock
                        GTest::gtest_main)
  rnode_link_allocator(${name})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    NO_PRETTY_VALUES
    PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT})
endfunction()

# rnode_benchmark(NAME SOURCES ... DEPS ...): build/bin/bench_<name>.
function(rnode_benchmark name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  rnode_target_flags(${name})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} benchmark::benchmark
                        benchmark::benchmark_main)
  rnode_link_allocator(${name})
endfunction()
