// How libember finds and refuses backend plugins (c_api/src/runtime/plugin_loader.cpp). Each case dlopens its own
// copy of libember.so from a fresh directory (a copy is a separate instance with its own plugin state, and its
// directory is where it looks first), lays out that directory, and asks for the Vulkan backend.
//
// Not linked to libember: usage plugin_loading_test <libember.so> <libember-vulkan.so or "-"> <fake plugin>; the
// second argument is "-" when this build has no Vulkan backend.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ember.h"

namespace fs = std::filesystem;

namespace {

fs::path g_libember, g_vulkan_plugin, g_fake_plugin;

// The C functions this test calls, from one libember instance.
struct Ember {
  void* handle = nullptr;
  decltype(&ember_device_create) device_create = nullptr;
  decltype(&ember_device_free) device_free = nullptr;
  decltype(&ember_backend_query) backend_query = nullptr;
  decltype(&ember_vulkan_requirements_query) vulkan_requirements_query = nullptr;
  decltype(&ember_last_error) last_error = nullptr;
};

template <class F>
void bind(void* handle, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  ASSERT_NE(f, nullptr) << name;
}

// A fresh directory holding a copy of libember (and whatever the case adds).
fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("ember_plugin_test_" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::copy_file(fs::canonical(g_libember), dir / "libember.so.0");
  return dir;
}

void load(const fs::path& dir, Ember& e) {
  e.handle = dlopen((dir / "libember.so.0").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(e.handle, nullptr) << dlerror();
  bind(e.handle, "ember_device_create", e.device_create);
  bind(e.handle, "ember_device_free", e.device_free);
  bind(e.handle, "ember_backend_query", e.backend_query);
  bind(e.handle, "ember_vulkan_requirements_query", e.vulkan_requirements_query);
  bind(e.handle, "ember_last_error", e.last_error);
}

bool vulkan_built() { return !g_vulkan_plugin.empty(); }

// Creating a Vulkan device fails with UNSUPPORTED and a message containing each of `needles`; the backend is still
// reported as compiled, with no device.
void expect_unsupported(Ember& e, std::initializer_list<std::string> needles) {
  ember_device* d = nullptr;
  ASSERT_EQ(e.device_create(EMBER_BACKEND_VULKAN, 0, &d), EMBER_ERR_UNSUPPORTED);
  EXPECT_EQ(d, nullptr);
  const std::string message = e.last_error();
  for (const auto& n : needles) EXPECT_NE(message.find(n), std::string::npos) << "'" << n << "' not in: " << message;
  ember_vulkan_requirements req{};
  req.struct_size = sizeof req;
  EXPECT_EQ(e.vulkan_requirements_query(&req), EMBER_ERR_UNSUPPORTED);
  ember_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(e.backend_query(EMBER_BACKEND_VULKAN, &info), EMBER_OK);
  EXPECT_EQ(info.compiled, vulkan_built() ? 1 : 0);
  EXPECT_EQ(info.device_count, 0);
  EXPECT_EQ(info.usable, 0);
}

TEST(PluginLoading, BogusFileNextToLibemberIsUnsupportedAndNamed) {
  if (!vulkan_built()) GTEST_SKIP() << "no Vulkan backend in this build";
  unsetenv("EMBER_PLUGIN_PATH");
  const fs::path dir = fresh_dir("bogus");
  std::ofstream(dir / "libember-vulkan.so") << "not a shared object";
  Ember e;
  load(dir, e);
  expect_unsupported(e, {(dir / "libember-vulkan.so").string(), "cannot load"});
}

TEST(PluginLoading, PluginOfAnotherBuildIsRefused) {
  if (!vulkan_built()) GTEST_SKIP() << "no Vulkan backend in this build";
  unsetenv("EMBER_PLUGIN_PATH");
  const fs::path dir = fresh_dir("foreign");
  fs::copy_file(g_fake_plugin, dir / "libember-vulkan.so");
  Ember e;
  load(dir, e);
  expect_unsupported(e, {(dir / "libember-vulkan.so").string(), "another build", "a-foreign-build"});
}

TEST(PluginLoading, MissingPluginSaysWhereItLooked) {
  if (!vulkan_built()) GTEST_SKIP() << "no Vulkan backend in this build";
  unsetenv("EMBER_PLUGIN_PATH");
  const fs::path dir = fresh_dir("missing");
  Ember e;
  load(dir, e);
  expect_unsupported(e, {"libember-vulkan.so not found", dir.string(), "EMBER_PLUGIN_PATH"});
}

TEST(PluginLoading, EmberPluginPathIsSearchedAfterLibembersDirectory) {
  if (!vulkan_built()) GTEST_SKIP() << "no Vulkan backend in this build";
  const fs::path dir = fresh_dir("env_bogus");
  const fs::path elsewhere = dir.parent_path() / "env_bogus_plugins";
  fs::remove_all(elsewhere);
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere / "libember-vulkan.so") << "not a shared object";
  setenv("EMBER_PLUGIN_PATH", ("/nonexistent:" + elsewhere.string()).c_str(), 1);
  Ember e;
  load(dir, e);
  expect_unsupported(e, {(elsewhere / "libember-vulkan.so").string()});
  unsetenv("EMBER_PLUGIN_PATH");
}

TEST(PluginLoading, RealPluginFoundThroughEmberPluginPath) {
  if (!vulkan_built()) GTEST_SKIP() << "no Vulkan backend in this build";
  const fs::path dir = fresh_dir("env_real");
  setenv("EMBER_PLUGIN_PATH", g_vulkan_plugin.parent_path().c_str(), 1);
  Ember e;
  load(dir, e);
  ember_backend_info info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(e.backend_query(EMBER_BACKEND_VULKAN, &info), EMBER_OK) << e.last_error();  // loads the plugin
  unsetenv("EMBER_PLUGIN_PATH");
  EXPECT_EQ(info.compiled, 1);
  ember_device* d = nullptr;
  if (info.device_count == 0) {
    // Loaded, but no device here: creating one says so (from the plugin), not that the plugin is missing.
    EXPECT_EQ(e.device_create(EMBER_BACKEND_VULKAN, 0, &d), EMBER_ERR_UNSUPPORTED);
    const std::string message = e.last_error();
    EXPECT_EQ(message.find("libember-vulkan.so"), std::string::npos) << message;
    GTEST_SKIP() << "the plugin loaded, but there is no Vulkan device here: " << message;
  }
  ASSERT_EQ(e.device_create(EMBER_BACKEND_VULKAN, 0, &d), EMBER_OK) << e.last_error();
  EXPECT_EQ(e.device_free(d), EMBER_OK);
}

TEST(PluginLoading, BackendNotCompiledIsUnsupported) {
  if (vulkan_built()) GTEST_SKIP() << "this build has the Vulkan backend";
  const fs::path dir = fresh_dir("not_compiled");
  Ember e;
  load(dir, e);
  expect_unsupported(e, {"not compiled"});
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc != 4) {
    fprintf(stderr, "usage: %s <libember.so> <libember-vulkan.so or -> <fake plugin>\n", argv[0]);
    return 2;
  }
  g_libember = argv[1];
  if (std::string(argv[2]) != "-") g_vulkan_plugin = fs::absolute(argv[2]);
  g_fake_plugin = argv[3];
  const int rc = RUN_ALL_TESTS();
  fs::remove_all(fs::temp_directory_path() / ("ember_plugin_test_" + std::to_string(getpid())));
  return rc;
}
