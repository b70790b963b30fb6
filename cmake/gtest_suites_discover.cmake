# Included by ctest (CTestTestfile.cmake) with SLUICE_SUITES_BINARY, _LABEL and _TIMEOUT set (GtestSuites.cmake):
# lists the binary's tests and adds one ctest test per suite, named LABEL.Suite, running its cases in one process.
if(NOT EXISTS "${SLUICE_SUITES_BINARY}")
  add_test("${SLUICE_SUITES_LABEL}_tests.NOT_BUILT" "${SLUICE_SUITES_BINARY}")
  return()
endif()
execute_process(COMMAND "${SLUICE_SUITES_BINARY}" --gtest_list_tests
                OUTPUT_VARIABLE listing RESULT_VARIABLE listed TIMEOUT 120)
if(NOT listed EQUAL 0)
  message(WARNING "${SLUICE_SUITES_BINARY} --gtest_list_tests failed (${listed})")
  add_test("${SLUICE_SUITES_LABEL}_tests.LISTING_FAILED" "${SLUICE_SUITES_BINARY}" --gtest_list_tests)
  return()
endif()
string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
foreach(line IN LISTS lines)
  # A suite line starts in column 0 and ends with '.', perhaps followed by "  # TypeParam = ...".
  if(line MATCHES "^([^ #][^ ]*)\\.( .*)?$")
    set(suite "${CMAKE_MATCH_1}")
    set(name "${SLUICE_SUITES_LABEL}.${suite}")
    add_test("${name}" "${SLUICE_SUITES_BINARY}" "--gtest_filter=${suite}.*" --gtest_brief=1)
    set_tests_properties("${name}" PROPERTIES LABELS "${SLUICE_SUITES_LABEL}" TIMEOUT "${SLUICE_SUITES_TIMEOUT}")
  endif()
endforeach()
