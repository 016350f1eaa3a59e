// The training plugins' entry (tools/ember/train_plugin.hpp): it hands its trainer only to a caller of the same
// interface version, build stamp and option layouts, and says why otherwise. The plugins to check come as
// arguments (meson passes every ember-train-<backend>.so it built).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/ember/train_plugin.hpp"

namespace {

std::vector<std::string> g_plugins;

using ember::tools::kTrainLayoutStamp;
using ember::tools::kTrainPluginBuildStamp;
using ember::tools::kTrainPluginInterface;
using ember::tools::TrainPluginEntry;

TrainPluginEntry entry_of(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ADD_FAILURE() << dlerror();
    return nullptr;
  }
  return reinterpret_cast<TrainPluginEntry>(dlsym(handle, ember::tools::kTrainPluginEntryName));
}

TEST(TrainPluginEntry, GivesItsTrainerOnlyToTheSameBuild) {
  ASSERT_FALSE(g_plugins.empty()) << "no plugin given";
  for (const auto& path : g_plugins) {
    SCOPED_TRACE(path);
    const TrainPluginEntry entry = entry_of(path);
    ASSERT_NE(entry, nullptr);
    const char* why = "unset";
    const auto* plugin = entry(kTrainPluginInterface, kTrainPluginBuildStamp, kTrainLayoutStamp, &why);
    ASSERT_NE(plugin, nullptr) << why;
    EXPECT_EQ(why, nullptr);
    EXPECT_NE(path.find(std::string("ember-train-") + plugin->backend + ".so"), std::string::npos);
    EXPECT_NE(plugin->train, nullptr);

    EXPECT_EQ(entry(kTrainPluginInterface + 1, kTrainPluginBuildStamp, kTrainLayoutStamp, &why), nullptr);
    EXPECT_NE(std::string(why).find("interface version"), std::string::npos) << why;
    EXPECT_EQ(entry(kTrainPluginInterface, "ember 0.0.0 another build", kTrainLayoutStamp, &why), nullptr);
    EXPECT_NE(std::string(why).find("build stamps differ"), std::string::npos) << why;
    EXPECT_EQ(entry(kTrainPluginInterface, nullptr, kTrainLayoutStamp, &why), nullptr);
    EXPECT_EQ(entry(kTrainPluginInterface, kTrainPluginBuildStamp, kTrainLayoutStamp + 1, &why), nullptr);
    EXPECT_NE(std::string(why).find("option layouts differ"), std::string::npos) << why;
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) g_plugins.emplace_back(argv[i]);
  return RUN_ALL_TESTS();
}
