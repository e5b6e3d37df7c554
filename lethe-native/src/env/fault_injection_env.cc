#include "env/fault_injection_env.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

namespace lethe {

const char* FaultKindName(FaultKind kind) {
  switch (kind) {
    case FaultKind::kAppend: return "append";
    case FaultKind::kSync: return "sync";
    case FaultKind::kRename: return "rename";
    case FaultKind::kCreate: return "create";
    default: return "?";
  }
}

namespace {

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env, std::string fname, std::unique_ptr<WritableFile> base)
      : env_(env), fname_(std::move(fname)), base_(std::move(base)) {}

  Status Append(std::string_view data) override {
    Status s = env_->MaybeFail(FaultKind::kAppend, fname_);
    if (s.ok()) s = env_->ChargeSpace(data.size(), fname_);
    if (s.ok()) s = base_->Append(data);
    if (s.ok()) size_ += data.size();
    return s;
  }
  Status Flush() override { return base_->Flush(); }
  Status Sync() override {
    Status s = env_->MaybeFail(FaultKind::kSync, fname_);
    if (s.ok()) s = base_->Sync();
    if (s.ok()) env_->Journal('S', fname_, {}, size_);
    return s;
  }
  Status Close() override { return base_->Close(); }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  std::unique_ptr<WritableFile> base_;
  uint64_t size_ = 0;
};

std::string DirOf(const std::string& fname) {
  size_t slash = fname.rfind('/');
  return slash == std::string::npos ? "." : fname.substr(0, slash);
}

}  // namespace

void FaultInjectionEnv::InjectFault(FaultKind kind, uint64_t after, bool persistent) {
  Fault& f = faults_[static_cast<int>(kind)];
  f.persistent = persistent;
  f.fired = false;
  f.countdown = static_cast<int64_t>(after);
}

void FaultInjectionEnv::SetSpaceLimit(uint64_t bytes) { space_left_ = static_cast<int64_t>(bytes); }

void FaultInjectionEnv::ClearFaults() {
  for (Fault& f : faults_) {
    f.countdown = -1;
    f.persistent = false;
    f.fired = false;
  }
  space_left_ = -1;
}

Status FaultInjectionEnv::MaybeFail(FaultKind kind, const std::string& fname) {
  Fault& f = faults_[static_cast<int>(kind)];
  if (f.fired.load() && f.persistent.load()) {
    faults_injected_++;
    return Status::IOError(fname, std::string("injected ") + FaultKindName(kind) + " failure");
  }
  int64_t c = f.countdown.load();
  while (c >= 0) {
    if (f.countdown.compare_exchange_weak(c, c - 1)) {
      if (c > 0) return Status::OK();
      f.fired = true;
      faults_injected_++;
      return Status::IOError(fname, std::string("injected ") + FaultKindName(kind) + " failure");
    }
  }
  return Status::OK();
}

Status FaultInjectionEnv::ChargeSpace(uint64_t bytes, const std::string& fname) {
  int64_t left = space_left_.load();
  while (left >= 0) {
    if (static_cast<uint64_t>(left) < bytes) {
      faults_injected_++;
      return Status::NoSpace(fname, "injected: no space left on device");
    }
    if (space_left_.compare_exchange_weak(left, left - static_cast<int64_t>(bytes))) break;
  }
  return Status::OK();
}

void FaultInjectionEnv::Journal(char op, const std::string& a, const std::string& b, uint64_t n) {
  int fd = journal_fd_.load();
  if (fd < 0) return;
  std::string line(1, op);
  line.append("\t").append(a).append("\t").append(b).append("\t").append(std::to_string(n)).append("\n");
  // One write to a journal opened O_APPEND, so threads never interleave. A kill
  // can still cut it where it crosses a page of the file: ApplyPowerLoss reads
  // only lines that end in a newline.
  ssize_t ignored = ::write(fd, line.data(), line.size());
  (void)ignored;
}

Status FaultInjectionEnv::NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) {
  if (create_hook_) create_hook_(fname);
  Status s = MaybeFail(FaultKind::kCreate, fname);
  if (!s.ok()) return s;
  // Journalled first: if the kill comes right after the creation, the file
  // must still count as not yet durable.
  Journal('C', fname);
  std::unique_ptr<WritableFile> base;
  s = base_->NewWritableFile(fname, &base);
  if (!s.ok()) return s;
  *result = std::make_unique<FaultWritableFile>(this, fname, std::move(base));
  return s;
}

Status FaultInjectionEnv::RemoveFile(const std::string& fname) {
  if (remove_hook_) remove_hook_(fname);
  Status s = base_->RemoveFile(fname);
  if (s.ok()) Journal('X', fname);
  return s;
}

Status FaultInjectionEnv::RenameFile(const std::string& src, const std::string& target) {
  Status s = MaybeFail(FaultKind::kRename, target);
  if (s.ok()) s = base_->RenameFile(src, target);
  if (s.ok()) Journal('R', src, target);
  return s;
}

Status FaultInjectionEnv::LinkFile(const std::string& src, const std::string& target) {
  Status s = MaybeFail(FaultKind::kCreate, target);
  if (s.ok()) s = base_->LinkFile(src, target);
  if (s.ok()) Journal('L', src, target);
  return s;
}

Status FaultInjectionEnv::SyncDir(const std::string& dir) {
  Status s = MaybeFail(FaultKind::kSync, dir);
  if (s.ok()) s = base_->SyncDir(dir);
  if (s.ok()) Journal('D', dir);
  return s;
}

Status FaultInjectionEnv::ApplyPowerLoss(const std::string& journal_path, int* changed) {
  *changed = 0;
  struct FileState {
    uint64_t synced = 0;
    bool name_durable = false;
  };
  std::map<std::string, FileState> files;  // files the journal tracks
  std::ifstream in(journal_path);
  if (!in) return Status::IOError(journal_path, "cannot read the sync journal");
  std::string line;
  while (std::getline(in, line)) {
    // op \t a \t b \t n \n; a line without its newline is the one the kill cut
    if (in.eof()) break;
    size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1), t3 = line.find('\t', t2 + 1);
    if (line.empty() || t3 == std::string::npos) continue;
    const char op = line[0];
    const std::string a = line.substr(t1 + 1, t2 - t1 - 1), b = line.substr(t2 + 1, t3 - t2 - 1);
    const uint64_t n = std::stoull(line.substr(t3 + 1));
    switch (op) {
      case 'C': files[a] = FileState{}; break;
      case 'S': if (files.count(a)) files[a].synced = n; break;
      case 'D':
        for (auto& [name, st] : files) {
          if (DirOf(name) == a) st.name_durable = true;
        }
        break;
      case 'R':
        // The new name is durable at once (and the old target's gone).
        if (files.count(a)) {
          files[b] = FileState{files[a].synced, true};
          files.erase(a);
        } else {
          files.erase(b);  // an untracked file: durable as it is
        }
        break;
      case 'L':
        // Shares the source's bytes; the new name needs a SyncDir.
        files[b] = FileState{files.count(a) ? files[a].synced : UINT64_MAX, false};
        break;
      case 'X': files.erase(a); break;
      default: break;
    }
  }
  namespace fs = std::filesystem;
  for (const auto& [name, st] : files) {
    std::error_code ec;
    if (!fs::exists(name, ec)) continue;
    if (!st.name_durable) {
      fs::remove(name, ec);
      if (ec) return Status::IOError(name, ec.message());
      ++*changed;
      continue;
    }
    uint64_t size = fs::file_size(name, ec);
    if (ec) return Status::IOError(name, ec.message());
    if (size > st.synced) {
      fs::resize_file(name, st.synced, ec);
      if (ec) return Status::IOError(name, ec.message());
      ++*changed;
    }
  }
  return Status::OK();
}

}  // namespace lethe
