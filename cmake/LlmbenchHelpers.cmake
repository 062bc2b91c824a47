# Helpers shared by every module, test and benchmark target.

add_library(llmbench_warnings INTERFACE)
target_compile_options(llmbench_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Wold-style-cast
  $<$<BOOL:${LLMBENCH_WERROR}>:-Werror>
  # GCC 12 reports false -Wrestrict on std::string concatenation at -O2/-O3 (GCC bug 105329).
  $<$<AND:$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>)
if(LLMBENCH_SANITIZE OR LLMBENCH_FUZZ)
  # Undefined behaviour aborts (a test or fuzzer fails) instead of printing and going on. Clang
  # 14's -fsanitize=function cannot compile C++20 coroutines (the Asio code of http and server
  # fails with "Cannot represent a difference across sections"), so that one check is left out.
  target_compile_options(llmbench_warnings INTERFACE -fsanitize=address,undefined
    -fno-sanitize-recover=undefined $<$<CXX_COMPILER_ID:Clang>:-fno-sanitize=function>
    -fno-omit-frame-pointer)
  target_link_options(llmbench_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(LLMBENCH_FUZZ)
  # Coverage feedback for libFuzzer in every library (undefined behaviour aborts, above, so the
  # fuzzer reports it as a crash).
  target_compile_options(llmbench_warnings INTERFACE -fsanitize=fuzzer-no-link)
endif()

# llmbench_add_module(name SOURCES ... [PUBLIC_DEPS ...] [PRIVATE_DEPS ...])
# Makes the static library llmbench_<name> with alias llmbench::<name>.
function(llmbench_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(llmbench_${name} STATIC ${ARG_SOURCES})
  add_library(llmbench::${name} ALIAS llmbench_${name})
  target_include_directories(llmbench_${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src> $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/src>)
  target_link_libraries(llmbench_${name} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_PRIVATE_DEPS} llmbench_warnings)
endfunction()

# llmbench_add_test(name SOURCES ... DEPS ... [LABELS ...])
# One GoogleTest binary per module; tests are discovered so ctest lists each case.
function(llmbench_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name}_test ${ARG_SOURCES})
  target_link_libraries(${name}_test PRIVATE ${ARG_DEPS} GTest::gtest_main GTest::gmock llmbench_warnings)
  # tests/support: helpers every test may use (shared_data.hpp).
  target_include_directories(${name}_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  # Binaries with a test that reads ../shared/data (tests/CMakeLists.txt lists them) carry the
  # label shared_data; such a test fails instead of skipping under LLMBENCH_REQUIRE_SHARED_DATA=1
  # (tests/support/shared_data.hpp), which scripts/test.sh sets when the data is there.
  if(name IN_LIST LLMBENCH_SHARED_DATA_TESTS)
    list(APPEND ARG_LABELS shared_data)
  endif()
  # Where tests find the source tree (data/, ../shared) and the built `llmbench` binary.
  target_compile_definitions(${name}_test PRIVATE
    LLMBENCH_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}" LLMBENCH_TEST_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name}_test
    PROPERTIES LABELS "${ARG_LABELS}" ENVIRONMENT "LLMBENCH_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()
