// Where MPI lives (docs/distributed.md "Where MPI lives"): `llmbench` itself links no MPI
// library, the plugin beside it does, and a launch of several processes whose plugin cannot be
// loaded stops at once with a message naming the path it tried. (The spread runs of
// mpi_run_test.cpp and mpi_spread_test.cpp are the proof that the plugin loads and works.)
#include "process.hpp"
#ifdef LLMBENCH_MPIEXEC
#include "mpi_support.hpp"
#endif

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

/// The libraries of Open MPI and those it brings (Debian 12's libmpi.so.40 needs the rest).
constexpr std::array<const char*, 7> kMpiLibraries{
    "libmpi.so",       "libopen-rte.so",      "libopen-pal.so", "libhwloc.so",
    "libevent_core-2", "libevent_pthreads-2", "libudev.so"};

class MpiPlugin : public ScratchDirTest {
 protected:
  MpiPlugin() : ScratchDirTest("mpi-plugin") {}

  /// `ldd path`'s output (the dynamic loader's list of the libraries `path` loads at start).
  std::string ldd(const std::string& path) {
    const std::string log =
        (dir_ / ("ldd-" + std::filesystem::path(path).filename().string())).string();
    Process p({"/usr/bin/ldd", path}, log);
    EXPECT_EQ(p.wait(std::chrono::seconds(30)), 0) << read_file(log);
    return read_file(log);
  }

#ifdef LLMBENCH_MPIEXEC
  /// How one `mpirun -np ranks llmbench --version` ended.
  struct Launch {
    int code = -1;  ///< exit code; -1 when it did not end within 60 s
    std::string out;
    std::chrono::steady_clock::duration took{};
  };

  /// Runs `mpirun -np ranks llmbench --version` to its end (at most 60 s).
  Launch version_under_mpirun(int ranks) {
    const std::string log = (dir_ / "mpirun.log").string();
    const auto start = std::chrono::steady_clock::now();
    Process p(mpirun_argv({binary(), "--version"}, ranks), log);
    Launch launch;
    launch.code = p.wait(std::chrono::seconds(60));
    launch.took = std::chrono::steady_clock::now() - start;
    launch.out = read_file(log);
    return launch;
  }
#endif
};

TEST_F(MpiPlugin, TheBinaryLoadsNoMpiLibraryAtStart) {
  const std::string libs = ldd(binary());
  // The list was read: the C library is always in it.
  ASSERT_NE(libs.find("libc.so.6"), std::string::npos) << libs;
  for (const char* lib : kMpiLibraries)
    EXPECT_EQ(libs.find(lib), std::string::npos) << lib << '\n' << libs;
#ifdef LLMBENCH_MPIEXEC
  // The plugin beside it does load Open MPI: the same check sees MPI where it is.
  const std::string plugin =
      (std::filesystem::path(binary()).parent_path() / "libllmbench_mpi.so").string();
  ASSERT_TRUE(std::filesystem::exists(plugin)) << plugin;
  const std::string plugin_libs = ldd(plugin);
  EXPECT_NE(plugin_libs.find("libmpi.so"), std::string::npos) << plugin_libs;
#endif
}

#ifdef LLMBENCH_MPIEXEC

TEST_F(MpiPlugin, SeveralProcessesWithoutThePluginStopAtOnceNamingThePath) {
  allow_mpirun_as_root();
  const std::string missing = "/nonexistent/libllmbench_mpi.so";
  ::setenv("LLMBENCH_MPI_PLUGIN", missing.c_str(), 1);
  const auto [code, out, took] = version_under_mpirun(2);
  ::unsetenv("LLMBENCH_MPI_PLUGIN");
  ASSERT_NE(code, -1) << "mpirun did not end within 60 s\n" << out;
  EXPECT_NE(code, 0) << out;
  // Both ranks refuse before MPI starts: no version printed, the path and the fix named.
  EXPECT_EQ(out.find("llmbench 0."), std::string::npos) << out;
  EXPECT_NE(out.find("OMPI_COMM_WORLD_SIZE=2"), std::string::npos) << out;
  EXPECT_NE(out.find(missing + ": cannot open shared object file"), std::string::npos) << out;
  EXPECT_NE(out.find("-DLLMBENCH_WITH_MPI=ON"), std::string::npos) << out;
  EXPECT_NE(out.find("LLMBENCH_MPI_PLUGIN"), std::string::npos) << out;
  // "At once": no MPI start-up, no wait for a peer (a few hundred ms on a quiet machine; the
  // bound leaves room for a loaded CI host).
  EXPECT_LT(took, std::chrono::seconds(20)) << out;
}

TEST_F(MpiPlugin, OneProcessWithoutThePluginRunsAlone) {
  allow_mpirun_as_root();
  ::setenv("LLMBENCH_MPI_PLUGIN", "/nonexistent/libllmbench_mpi.so", 1);
  const auto [code, out, took] = version_under_mpirun(1);
  ::unsetenv("LLMBENCH_MPI_PLUGIN");
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("llmbench 0."), std::string::npos) << out;
  EXPECT_EQ(out.find("could not be loaded"), std::string::npos) << out;
}

TEST_F(MpiPlugin, ThePluginBesideTheBinaryJoinsTheRanks) {
  // The default search (no LLMBENCH_MPI_PLUGIN): the plugin beside `llmbench` starts MPI in both
  // ranks, and both print their version after joining.
  allow_mpirun_as_root();
  ::unsetenv("LLMBENCH_MPI_PLUGIN");
  const auto [code, out, took] = version_under_mpirun(2);
  EXPECT_EQ(code, 0) << out;
  const auto first = out.find("llmbench 0.");
  ASSERT_NE(first, std::string::npos) << out;
  EXPECT_NE(out.find("llmbench 0.", first + 1), std::string::npos) << out;
}

#endif

}  // namespace
}  // namespace llmbench::e2e
