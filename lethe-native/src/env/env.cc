#include <chrono>

#include "lethe/env.h"

namespace lethe {

Status WriteStringToFile(Env* env, std::string_view data, const std::string& fname, bool sync) {
  std::unique_ptr<WritableFile> file;
  Status s = env->NewWritableFile(fname, &file);
  if (!s.ok()) return s;
  s = file->Append(data);
  if (s.ok() && sync) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (!s.ok()) env->RemoveFile(fname);
  return s;
}

Status ReadFileToString(Env* env, const std::string& fname, std::string* data) {
  data->clear();
  std::unique_ptr<SequentialFile> file;
  Status s = env->NewSequentialFile(fname, &file);
  if (!s.ok()) return s;
  constexpr size_t kChunk = 64 * 1024;
  std::string scratch(kChunk, '\0');
  while (true) {
    std::string_view chunk;
    s = file->Read(kChunk, &chunk, scratch.data());
    if (!s.ok() || chunk.empty()) break;
    data->append(chunk);
  }
  return s;
}

namespace {
class SystemClock final : public Clock {
 public:
  uint64_t NowMicros() override {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  }
};
}  // namespace

Clock* Clock::Default() {
  static SystemClock* clock = new SystemClock();  // never destroyed
  return clock;
}

uint64_t ManualClock::NowMicros() { return now_.load(std::memory_order_acquire); }
void ManualClock::Advance(uint64_t micros) { now_.fetch_add(micros, std::memory_order_acq_rel); }
void ManualClock::Set(uint64_t micros) { now_.store(micros, std::memory_order_release); }

}  // namespace lethe
