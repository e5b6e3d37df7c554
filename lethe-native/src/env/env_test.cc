// Hole punching reports what it frees: whole file-system blocks only.
#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>
#include <string>

#include "lethe/env.h"

namespace lethe {
namespace {

// A range that starts and ends inside blocks: only the whole 4 KiB blocks
// inside it can be freed ([4096, 20480) here: 4 blocks).
constexpr uint64_t kOffset = 1000, kLen = 20000;

void WriteFile(Env* env, const std::string& name) {
  std::unique_ptr<WritableFile> f;
  ASSERT_TRUE(env->NewWritableFile(name, &f).ok());
  ASSERT_TRUE(f->Append(std::string(64 << 10, 'x')).ok());
  ASSERT_TRUE(f->Sync().ok());
  ASSERT_TRUE(f->Close().ok());
}

std::string ReadFile(Env* env, const std::string& name) {
  std::unique_ptr<RandomAccessFile> f;
  EXPECT_TRUE(env->NewRandomAccessFile(name, &f).ok());
  std::string scratch(64 << 10, '?');
  std::string_view got;
  EXPECT_TRUE(f->Read(0, scratch.size(), &got, scratch.data()).ok());
  return std::string(got);
}

TEST(EnvTest, MemEnvCountsTheWholeBlocksInsideAPunchedRange) {
  auto env = NewMemEnv();
  WriteFile(env.get(), "/f");
  uint64_t freed = 1;
  ASSERT_TRUE(env->PunchHole("/f", kOffset, kLen, &freed).ok());
  EXPECT_EQ(4u * 4096, freed);
  ASSERT_TRUE(env->PunchHole("/f", 100, 200, &freed).ok());
  EXPECT_EQ(0u, freed);
  const std::string data = ReadFile(env.get(), "/f");
  EXPECT_EQ(std::string(kLen, '\0'), data.substr(kOffset, kLen));
  EXPECT_EQ('x', data[kOffset - 1]);
  EXPECT_EQ('x', data[kOffset + kLen]);
}

// The POSIX environment measures: allocated blocks before and after.
TEST(EnvTest, PosixEnvMeasuresTheBlocksAPunchFreed) {
  Env* env = Env::Default();
  const std::string name = ::testing::TempDir() + "/lethe_punch_" + std::to_string(::getpid());
  WriteFile(env, name);
  uint64_t freed = 1;
  Status s = env->PunchHole(name, kOffset, kLen, &freed);
  if (s.IsNotSupported()) {
    EXPECT_EQ(0u, freed) << "nothing is freed where the file system cannot punch";
  } else {
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_GT(freed, 0u);
    EXPECT_LE(freed, kLen);
    EXPECT_EQ(0u, freed % 512);
  }
  const std::string data = ReadFile(env, name);
  EXPECT_EQ(64u << 10, data.size());
  EXPECT_EQ(s.ok() ? std::string(kLen, '\0') : std::string(kLen, 'x'), data.substr(kOffset, kLen));
  ASSERT_TRUE(env->RemoveFile(name).ok());
}

}  // namespace
}  // namespace lethe
