#pragma once
/// @file
/// Finding and opening llmbench's MPI plugin, `libllmbench_mpi.so` (mpi_abi.hpp): `World::join`
/// calls `open_mpi_plugin` only when an MPI launcher started the process (docs/distributed.md
/// "Where MPI lives").

#include "llmbench/dist/mpi_abi.hpp"

#include <string>
#include <vector>

namespace llmbench::dist {

/// The plugin's file name.
inline constexpr const char* kMpiPluginFile = "libllmbench_mpi.so";

/// Where to look for the plugin, in order: `override_path` alone when it is set and not empty
/// (the environment variable `LLMBENCH_MPI_PLUGIN`); else `<exe_dir>/libllmbench_mpi.so` (the
/// build tree, where the plugin is written beside `llmbench`) and then
/// `<exe_dir>/../<libdir>/llmbench/libllmbench_mpi.so` (the install tree; `libdir` is
/// `CMAKE_INSTALL_LIBDIR`, used as it is when absolute). Without `exe_dir` (empty: the
/// executable's path is unknown) only the override can be tried.
[[nodiscard]] std::vector<std::string> mpi_plugin_candidates(const char* override_path,
                                                             const std::string& exe_dir,
                                                             const std::string& libdir);

/// A plugin that opened: its `dlopen` handle and table, or both null.
struct MpiPlugin {
  void* handle = nullptr;
  const MpiTable* table = nullptr;
  std::string path;  ///< the file it was opened from
};

/// What looking for the plugin found: the plugin (if one opened) and, for each path that did
/// not open or did not fit, "<path>: <why>" (dlerror's text, a missing entry, another ABI).
struct MpiPluginSearch {
  MpiPlugin plugin;
  std::vector<std::string> failures;
};

/// Opens the first of `candidates` that loads (`dlopen`, RTLD_NOW | RTLD_GLOBAL: Open MPI and its
/// libraries then resolve the components that `MPI_Init` opens later as in a program linked to
/// them; Debian's components also name libmpi as a dependency, but one that relies on the
/// global scope would fail only under a launcher) and whose table matches `kMpiAbiVersion`. A
/// plugin that opened is never closed: MPI keeps threads and exit handlers in its libraries until
/// the process ends.
[[nodiscard]] MpiPluginSearch open_mpi_plugin(const std::vector<std::string>& candidates);

/// `mpi_plugin_candidates` for this process: `LLMBENCH_MPI_PLUGIN`, the directory of
/// `/proc/self/exe` and this build's `CMAKE_INSTALL_LIBDIR`.
[[nodiscard]] std::vector<std::string> mpi_plugin_candidates();

}  // namespace llmbench::dist
