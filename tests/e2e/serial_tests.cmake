# Included by ctest after the discovered e2e tests (TEST_INCLUDE_FILES, tests/e2e/CMakeLists.txt):
# the tests whose assertions read latencies of the loopback (spikes against a 3 x rule, a 10%
# stability spread, send times within 1 ms, run-vs-simulate agreement) run alone, not beside
# another test's load: on a shared 2-core CI machine a neighbouring sweep once put a 130 ms
# hiccup into a window (docs/reliability.md, "Tests that read the loopback's timing").
# ctest ignores a name here that no test has, so rename a test here when renaming it there.
set(llmbench_serial_e2e_tests
  SweepRulesTest.StallsAreFoundAsSpikesWhereTheyHappened
  SweepRulesTest.ADriftingServerIsExtendedUntilStableAndACleanOneIsNot
  AgreementTest.RunAgainstServeMatchesSimulate
  AgreementTest.OpenLoopWithACapAgreesOnQueueWait
  TraceReplayTest.AzureConvTenMinutesAtTenfoldKeepsTimesAndLengths
  ServeCmdTest.PredictThenVerifyTheTopTwoSettingsWithinTenPercentOnThroughput
  ServeCmdTest.SloSearchPerSettingRunsInsideEachSettingsServer
  MpiRunTest.ThreeRanksMergeIntoTheSingleProcessRun
  MpiRunTest.AKilledRankEndsTheJobAndTheOthersKeepTheirRecords)
foreach(t IN LISTS llmbench_serial_e2e_tests)
  set_tests_properties(${t} PROPERTIES RUN_SERIAL TRUE)
endforeach()
