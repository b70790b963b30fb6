# One ctest test per googletest suite, discovered when ctest runs (as gtest_discover_tests' PRE_TEST mode does).
#
# Why not one ctest test per test case: every test process of a sanitizer build pays ~0.7 s to start (the ASan
# runtime maps its shadow and the 300+ MB binary relocates), and a thousand of them cost CI several minutes of its
# 30-minute budget. A suite is still a handy unit to select: `ctest -R Crc32c`, `./x test -R ReplicatedPartition`;
# a failure prints gtest's output, which names the failing case.
#
# sluice_gtest_suites(TARGET LABEL TIMEOUT): registers the suites of TARGET's test binary, each labelled LABEL.
function(sluice_gtest_suites target label timeout)
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  file(GENERATE OUTPUT "${include_file}" CONTENT
"set(SLUICE_SUITES_BINARY \"$<TARGET_FILE:${target}>\")
set(SLUICE_SUITES_LABEL \"${label}\")
set(SLUICE_SUITES_TIMEOUT \"${timeout}\")
include(\"${CMAKE_SOURCE_DIR}/cmake/gtest_suites_discover.cmake\")
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
