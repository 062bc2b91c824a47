// Finding and opening the MPI plugin (docs/distributed.md "Where MPI lives"), and `World::join`
// refusing a launch of several processes without it. MPI itself is never started here.
#include "llmbench/core/error.hpp"
#include "llmbench/dist/plugin_loader.hpp"
#include "llmbench/dist/world.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <gnu/libc-version.h>
#include <string>

namespace llmbench::dist {
namespace {

TEST(MpiPluginCandidates, TheOverrideAloneWhenSet) {
  EXPECT_EQ(mpi_plugin_candidates("/x/p.so", "/opt/l/bin", "lib"),
            std::vector<std::string>{"/x/p.so"});
}

TEST(MpiPluginCandidates, BesideTheBinaryThenTheInstallTree) {
  EXPECT_EQ(mpi_plugin_candidates(nullptr, "/opt/l/bin", "lib"),
            (std::vector<std::string>{"/opt/l/bin/libllmbench_mpi.so",
                                      "/opt/l/lib/llmbench/libllmbench_mpi.so"}));
  // An empty override is no override; a multiarch libdir; an absolute libdir is used as it is.
  EXPECT_EQ(mpi_plugin_candidates("", "/usr/bin", "lib/x86_64-linux-gnu"),
            (std::vector<std::string>{"/usr/bin/libllmbench_mpi.so",
                                      "/usr/lib/x86_64-linux-gnu/llmbench/libllmbench_mpi.so"}));
  EXPECT_EQ(mpi_plugin_candidates(nullptr, "/opt/l/bin", "/srv/lib64"),
            (std::vector<std::string>{"/opt/l/bin/libllmbench_mpi.so",
                                      "/srv/lib64/llmbench/libllmbench_mpi.so"}));
  EXPECT_TRUE(mpi_plugin_candidates(nullptr, "", "lib").empty());
}

TEST(OpenMpiPlugin, EveryFailureIsNamedWithItsPathAndReason) {
  // A library that loads but is no plugin: the C library, found from one of its functions
  // that no sanitizer runtime intercepts (ASan's own `puts` would name the test binary).
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&gnu_get_libc_version), &info), 0);  // NOLINT
  const std::string libc = info.dli_fname;
  const MpiPluginSearch search = open_mpi_plugin({"/nonexistent/libllmbench_mpi.so", libc});
  EXPECT_EQ(search.plugin.table, nullptr);
  EXPECT_EQ(search.plugin.handle, nullptr);
  ASSERT_EQ(search.failures.size(), 2U);
  EXPECT_EQ(search.failures[0],
            "/nonexistent/libllmbench_mpi.so: cannot open shared object file: No such file or "
            "directory");
  EXPECT_EQ(search.failures[1], libc + ": no symbol llmbench_mpi_plugin");
}

#if LLMBENCH_TEST_WITH_MPI
TEST(OpenMpiPlugin, TheBuiltPluginOpensWithThisBuildsTable) {
  // Opening loads Open MPI's libraries into this process but starts nothing (no MPI_Init).
  const std::string path = std::string(LLMBENCH_TEST_BINARY_DIR) + "/libllmbench_mpi.so";
  const MpiPluginSearch search = open_mpi_plugin({"/nonexistent/libllmbench_mpi.so", path});
  ASSERT_NE(search.plugin.table, nullptr) << (search.failures.empty() ? "" : search.failures[0]);
  EXPECT_EQ(search.plugin.path, path);
  EXPECT_EQ(search.failures.size(), 1U);
  const MpiTable& t = *search.plugin.table;
  EXPECT_EQ(t.abi_version, kMpiAbiVersion);
  EXPECT_EQ(t.table_size, sizeof(MpiTable));
  EXPECT_EQ(t.success, 0);  // MPI_SUCCESS in Open MPI and MPICH
  for (const void* fn :
       {reinterpret_cast<const void*>(t.init), reinterpret_cast<const void*>(t.finalize),  // NOLINT
        reinterpret_cast<const void*>(t.gatherv_bytes),                                    // NOLINT
        reinterpret_cast<const void*>(t.error_string)})                                    // NOLINT
    EXPECT_NE(fn, nullptr);
  EXPECT_TRUE(built_with_mpi());
}
#else
TEST(OpenMpiPlugin, ABuildWithoutMpiSaysSo) {
  EXPECT_FALSE(built_with_mpi());
}
#endif

/// Sets environment variables for one test and removes them after.
class LauncherEnvironment : public ::testing::Test {
 protected:
  void SetUp() override {
    if (launched_by_mpi())
      GTEST_SKIP() << "started by an MPI launcher";
  }
  void TearDown() override {
    ::unsetenv("OMPI_COMM_WORLD_SIZE");
    ::unsetenv("PMIX_RANK");
    ::unsetenv("SLURM_STEP_NUM_TASKS");
    ::unsetenv("LLMBENCH_MPI_PLUGIN");
  }
  /// The text of `World::join`'s refusal; a test failure (and "") when join went on.
  std::string join_refusal() {
    try {
      World::join(argc_, argv_);
    } catch (const Exception& e) {
      return e.what();
    }
    ADD_FAILURE() << "join went on without the plugin";
    return {};
  }

  int argc_ = 1;
  char name_[10] = "dist_test";
  char* args_[2] = {name_, nullptr};
  char** argv_ = args_;
};

TEST_F(LauncherEnvironment, SeveralProcessesWithoutThePluginAreRefusedNamingThePath) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  ::setenv("LLMBENCH_MPI_PLUGIN", "/nonexistent/libllmbench_mpi.so", 1);
  const std::string what = join_refusal();
  EXPECT_NE(what.find("OMPI_COMM_WORLD_SIZE=2"), std::string::npos) << what;
  EXPECT_NE(what.find("/nonexistent/libllmbench_mpi.so: cannot open shared object file"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("libopenmpi-dev, -DLLMBENCH_WITH_MPI=ON"), std::string::npos) << what;
  EXPECT_NE(what.find(built_with_mpi() ? "could not be loaded" : "built without MPI"),
            std::string::npos)
      << what;
  EXPECT_EQ(World::current(), nullptr);
}

TEST_F(LauncherEnvironment, ASlurmPmixLaunchOfSeveralTasksIsCountedFromSlurm) {
  // `srun --mpi=pmix` sets PMIX_RANK and no size of its own; Slurm's task count says how many.
  ::setenv("PMIX_RANK", "0", 1);
  ::setenv("SLURM_STEP_NUM_TASKS", "4", 1);
  ::setenv("LLMBENCH_MPI_PLUGIN", "/nonexistent/libllmbench_mpi.so", 1);
  const std::string what = join_refusal();
  EXPECT_NE(what.find("SLURM_STEP_NUM_TASKS=4"), std::string::npos) << what;
}

TEST_F(LauncherEnvironment, OneProcessWithoutThePluginRunsAlone) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  ::setenv("LLMBENCH_MPI_PLUGIN", "/nonexistent/libllmbench_mpi.so", 1);
  EXPECT_EQ(World::join(argc_, argv_), nullptr);
  EXPECT_EQ(World::current(), nullptr);
}

}  // namespace
}  // namespace llmbench::dist
