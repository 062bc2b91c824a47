#include "llmbench/dist/plugin_loader.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <dlfcn.h>
#include <filesystem>
#include <system_error>

#ifndef LLMBENCH_INSTALL_LIBDIR
#define LLMBENCH_INSTALL_LIBDIR "lib"
#endif

namespace llmbench::dist {

std::vector<std::string> mpi_plugin_candidates(const char* override_path,
                                               const std::string& exe_dir,
                                               const std::string& libdir) {
  if (override_path != nullptr && *override_path != '\0')
    return {override_path};
  if (exe_dir.empty())
    return {};
  const std::filesystem::path dir(exe_dir);
  const std::filesystem::path lib(libdir);
  const std::filesystem::path installed =
      (lib.is_absolute() ? lib : dir / ".." / lib) / "llmbench" / kMpiPluginFile;
  return {(dir / kMpiPluginFile).string(), installed.lexically_normal().string()};
}

std::vector<std::string> mpi_plugin_candidates() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return mpi_plugin_candidates(std::getenv("LLMBENCH_MPI_PLUGIN"),
                               ec ? std::string() : exe.parent_path().string(),
                               LLMBENCH_INSTALL_LIBDIR);
}

namespace {

/// The plugin's table from an opened `handle`, or null with `why` set.
const MpiTable* table_of(void* handle, std::string& why) {
  void* symbol = dlsym(handle, kMpiPluginEntry);
  if (symbol == nullptr) {
    why = fmt::format("no symbol {}", kMpiPluginEntry);
    return nullptr;
  }
  // POSIX guarantees that a dlsym result converts to a function pointer (dlsym(3)).
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-reinterpret-cast)
  const auto entry = reinterpret_cast<MpiPluginEntry>(symbol);
  const MpiTable* table = entry();
  if (table == nullptr) {
    why = fmt::format("{} returned no table", kMpiPluginEntry);
    return nullptr;
  }
  if (table->abi_version != kMpiAbiVersion || table->table_size != sizeof(MpiTable)) {
    why = fmt::format(
        "a plugin of another llmbench (ABI version {}, table of {} bytes; this llmbench needs "
        "version {}, {} bytes)",
        table->abi_version, table->table_size, kMpiAbiVersion, sizeof(MpiTable));
    return nullptr;
  }
  return table;
}

}  // namespace

MpiPluginSearch open_mpi_plugin(const std::vector<std::string>& candidates) {
  MpiPluginSearch search;
  for (const auto& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      // dlerror's text usually starts with the path itself.
      const char* text = dlerror();
      const std::string why = text != nullptr ? text : "not loaded";
      search.failures.push_back(why.starts_with(path) ? why : fmt::format("{}: {}", path, why));
      continue;
    }
    std::string why;
    if (const MpiTable* table = table_of(handle, why)) {
      search.plugin = MpiPlugin{.handle = handle, .table = table, .path = path};
      return search;
    }
    dlclose(handle);
    search.failures.push_back(fmt::format("{}: {}", path, why));
  }
  return search;
}

}  // namespace llmbench::dist
