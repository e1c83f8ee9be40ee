# Helpers that give every target of ours the same flags. Third-party code is
# never compiled with our warnings.

# Clang's thread-safety analysis of every ABSL_GUARDED_BY / ABSL_*_LOCKS_*
# annotation (preset `thread-safety`); with -Werror a violation fails the
# build.
option(RNODE_THREAD_SAFETY "Build with clang's -Wthread-safety" OFF)

# Warnings as errors on our own code only.
function(rnode_target_flags target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror
                         -Wno-unused-parameter)
  if(RNODE_THREAD_SAFETY)
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
  set_property(GLOBAL APPEND PROPERTY RNODE_TARGETS ${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR})
endfunction()

# The process allocator (docs/adr/0007-jemalloc.md) for an executable of
# ours: jemalloc unless RNODE_JEMALLOC is off (sanitizer presets), with the
# options in util/allocator_conf.cc.
function(rnode_link_allocator target)
  if(RNODE_JEMALLOC)
    target_link_libraries(${target} PRIVATE PkgConfig::JEMALLOC)
    target_sources(${target} PRIVATE
                   ${PROJECT_SOURCE_DIR}/util/allocator_conf.cc)
    target_compile_definitions(${target} PRIVATE RNODE_JEMALLOC=1)
  endif()
endfunction()

# rnode_library(NAME SOURCES ... DEPS ... PRIVATE_DEPS ... HEADERS ...)
# DEPS are PUBLIC: only libraries that the library's public headers include
# (scripts/check-includes enforces it, rule R5). HEADERS names header-only
# files of a folder that holds several libraries, so their owner is known.
function(rnode_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS;HEADERS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  rnode_target_flags(${name})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  set_property(TARGET ${name} PROPERTY RNODE_HEADERS "${ARG_HEADERS}")
endfunction()

# Writes build/rnode_targets.tsv: one line per target of ours (name, type,
# source folder, sources, link libraries, interface link libraries, declared
# headers), the graph scripts/check-includes checks every include against.
# Call after every add_subdirectory.
function(rnode_write_target_table)
  get_property(targets GLOBAL PROPERTY RNODE_TARGETS)
  set(out "# name\ttype\tsource_dir\tsources\tlink\tinterface\theaders\n")
  foreach(t IN LISTS targets)
    set(row ${t})
    foreach(prop TYPE SOURCE_DIR SOURCES LINK_LIBRARIES
                 INTERFACE_LINK_LIBRARIES RNODE_HEADERS)
      get_target_property(v ${t} ${prop})
      if(NOT v)
        set(v "")
      endif()
      string(APPEND row "\t${v}")
    endforeach()
    string(APPEND out "${row}\n")
  endforeach()
  file(WRITE ${CMAKE_BINARY_DIR}/rnode_targets.tsv "${out}")
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

# rnode_embed_text(TARGET NAMESPACE ns HEADER path.h FILES a.rho ...): text
# files compiled into TARGET as `std::string_view k<Name>Text` constants in
# NAMESPACE, declared by HEADER (a repository header), regenerated when a
# file changes (cmake/embed_text.cmake).
function(rnode_embed_text target)
  cmake_parse_arguments(ARG "" "NAMESPACE;HEADER" "FILES" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cc)
  set(files "")
  foreach(f IN LISTS ARG_FILES)
    list(APPEND files ${CMAKE_CURRENT_SOURCE_DIR}/${f})
  endforeach()
  # Joined with "|": a ";" would not survive the command line.
  string(REPLACE ";" "|" files_arg "${files}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAMESPACE=${ARG_NAMESPACE}
            -DHEADER=${ARG_HEADER} "-DFILES=${files_arg}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_text.cmake
    COMMENT "Embedding ${ARG_HEADER}'s text files"
    VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
