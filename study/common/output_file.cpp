// SPDX-License-Identifier: Apache-2.0
#include "study/common/output_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <vector>

#include "schedules/excerpt.hpp"
#include "study/common/errors.hpp"

namespace ppsim {
namespace {

// The temporaries that exist now, for the signal handler to remove: a fixed table of owned C
// strings, since a handler may neither allocate nor lock. A temporary made while the table is full
// is still removed on every other path, just not by a signal.
std::array<std::atomic<char*>, 256> live_temporaries{};

void track_temporary(const std::string& path) {
  char* copy = ::strdup(path.c_str());
  if (copy == nullptr) return;
  for (std::atomic<char*>& slot : live_temporaries) {
    char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, copy)) return;
  }
  std::free(copy);
}

void untrack_temporary(const std::string& path) {
  for (std::atomic<char*>& slot : live_temporaries) {
    char* held = slot.load();
    if (held != nullptr && path == held && slot.compare_exchange_strong(held, nullptr)) {
      std::free(held);
      return;
    }
  }
}

// Removes a temporary and forgets it.
void remove_temporary(const std::string& path) {
  std::remove(path.c_str());
  untrack_temporary(path);
}

extern "C" void remove_temporaries_and_die(int signal_number) {
  for (std::atomic<char*>& slot : live_temporaries) {
    if (char* held = slot.load()) ::unlink(held);
  }
  // Then end as the signal would have, so the parent sees the signal.
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

constexpr int kEndingSignals[] = {SIGINT, SIGTERM, SIGHUP};

// SIGINT, SIGTERM and SIGHUP held back while outputs are renamed into place, so that a run ends
// with all of its files or none; a signal that came meanwhile is delivered at the end.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t ending;
    sigemptyset(&ending);
    for (const int s : kEndingSignals) sigaddset(&ending, s);
    held_ = ::pthread_sigmask(SIG_BLOCK, &ending, &before_) == 0;
  }
  ~SignalsHeld() {
    if (held_) ::pthread_sigmask(SIG_SETMASK, &before_, nullptr);
  }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t before_{};
  bool held_ = false;
};

// How one output reaches its target.
struct Plan {
  const OutputFile* file = nullptr;
  std::string target;     // the path after following symlinks
  bool in_place = false;  // a FIFO or a device: written as it is
  std::string temporary;  // for a regular target: the unique file renamed onto it
  mode_t mode = 0666;
};

[[noreturn]] void refuse(const OutputFile& file, const std::string& why) {
  throw InputError(file.flag + ": cannot write " + excerpt(file.path) + ": " + why);
}

std::string reason(int error) { return std::strerror(error); }

// Follows symlinks, a dangling one too (its target is the file to create), up to 40 links as the
// kernel does; the path as given when it is not a link. A chain longer than that (a loop) is
// refused: renaming onto it would replace the link with a file.
std::string resolved(const OutputFile& file) {
  std::filesystem::path current(file.path);
  std::error_code error;
  for (int links = 0; std::filesystem::is_symlink(std::filesystem::symlink_status(current, error)); ++links) {
    if (links == 40) refuse(file, "a loop of symbolic links");
    const std::filesystem::path target = std::filesystem::read_symlink(current, error);
    if (error) break;
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  return current.string();
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t wrote = ::write(fd, text.data() + done, text.size() - done);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(wrote);
  }
  return true;
}

mode_t default_mode() {
  // umask can only be read by setting it; ppsim writes its files from one thread, at the end.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

Plan plan_for(const OutputFile& file) {
  Plan plan;
  plan.file = &file;
  if (file.path.empty()) refuse(file, "the path is empty");
  plan.target = resolved(file);
  struct stat info {};
  if (::stat(plan.target.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) refuse(file, "it is a directory");
    plan.in_place = !S_ISREG(info.st_mode);
    plan.mode = info.st_mode & 07777;
  } else {
    plan.mode = default_mode();
  }
  return plan;
}

// A unique temporary file (mkstemp) for `target`: beside it, so that rename is atomic. It is named
// after the target where the name fits NAME_MAX, and ".ppsim-XXXXXX" where it would not (a target
// of 245 to 255 bytes is still a valid name). Tracked for the signal handler.
int make_temporary(const std::string& target, std::string& path) {
  const std::filesystem::path file(target);
  const std::filesystem::path directory = file.has_parent_path() ? file.parent_path() : ".";
  const std::string named = "." + file.filename().string() + ".ppsim-XXXXXX";
  path = (directory / (named.size() <= NAME_MAX ? named : std::string(".ppsim-XXXXXX"))).string();
  const int fd = ::mkstemp(path.data());
  if (fd >= 0) track_temporary(path);
  return fd;
}

// The system's temporary directory: $TMPDIR when it names one, else /tmp (as std::tmpfile uses),
// so that a TMPDIR that does not exist is not a failure of its own.
std::filesystem::path temporary_directory() {
  std::error_code error;
  std::filesystem::path directory = std::filesystem::temp_directory_path(error);
  return error ? std::filesystem::path("/tmp") : directory;
}

// Reads the file at `path` in blocks into `sink(data, size)`, which returns false to stop; true
// when the whole file was read and taken.
template <typename Sink>
bool read_blocks(const std::string& path, Sink sink) {
  std::ifstream in(path, std::ios::binary);
  std::string block(1 << 20, '\0');
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got > 0 && !sink(block.data(), got)) return false;
  }
  return in.eof();
}

// Copies a spooled file's contents to `fd`.
bool copy_spool(const std::string& spool, int fd) {
  return read_blocks(spool, [&](const char* data, std::size_t size) { return write_all(fd, std::string(data, size)); });
}

// A unique temporary in the target's directory (so that rename is atomic), holding the text; a
// spooled file is that temporary already.
void write_temporary(Plan& plan) {
  if (plan.file->spooled != nullptr) {
    SpooledFile& spool = *plan.file->spooled;
    if (!spool.close()) refuse(*plan.file, "the write failed (disk full?)");
    if (::chmod(spool.temporary().c_str(), plan.mode) != 0) refuse(*plan.file, reason(errno));
    plan.temporary = spool.temporary();  // removed below on failure, renamed on success
    return;
  }
  std::string pattern;
  const int fd = make_temporary(plan.target, pattern);
  if (fd < 0) refuse(*plan.file, reason(errno));
  plan.temporary = pattern;
  const bool ok = write_all(fd, plan.file->text) && ::fchmod(fd, plan.mode) == 0;
  const int error = errno;
  if (::close(fd) != 0 || !ok) refuse(*plan.file, reason(ok ? errno : error));
}

void write_in_place(const Plan& plan) {
  const int fd = ::open(plan.target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) refuse(*plan.file, reason(errno));
  bool ok = false;
  if (plan.file->spooled != nullptr) {
    SpooledFile& spool = *plan.file->spooled;
    ok = spool.close() && copy_spool(spool.temporary(), fd);
  } else {
    ok = write_all(fd, plan.file->text);
  }
  const int error = errno;
  if (::close(fd) != 0 || !ok) refuse(*plan.file, reason(ok ? errno : error));
}

}  // namespace

// The temporary directory, named in an error about a temporary file there: which one, and why.
[[noreturn]] void refuse_temporary_directory(const std::filesystem::path& directory, const std::string& why) {
  throw InputError("TMPDIR: cannot use " + excerpt(directory.string()) + " for a temporary file: " + why +
                   "; set TMPDIR to a writable directory with room");
}

SpooledFile::SpooledFile(std::string path, std::string flag) : path_(std::move(path)), flag_(std::move(flag)) {
  const OutputFile file{path_, "", flag_, nullptr};
  const Plan plan = plan_for(file);
  // A FIFO or a device is written in place at the end; its contents wait in the temporary directory.
  const std::filesystem::path spool_directory = temporary_directory();
  const std::string beside = plan.in_place ? (spool_directory / "ppsim-spool").string() : plan.target;
  const int fd = make_temporary(beside, temporary_);
  if (fd < 0) {
    const int error = errno;
    temporary_.clear();
    if (plan.in_place) refuse_temporary_directory(spool_directory, reason(error));
    refuse(file, reason(error));
  }
  ::close(fd);
  stream_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!stream_) {
    remove_temporary(temporary_);
    temporary_.clear();
    refuse(file, "cannot open its temporary file");
  }
}

SpooledFile::~SpooledFile() {
  close();
  if (!temporary_.empty()) remove_temporary(temporary_);
}

void SpooledFile::committed() {
  untrack_temporary(temporary_);
  temporary_.clear();
}

ScratchFile::ScratchFile() {
  directory_ = temporary_directory().string();
  path_ = (std::filesystem::path(directory_) / "ppsim-scratch-XXXXXX").string();
  const int fd = ::mkstemp(path_.data());
  if (fd < 0) {
    const int error = errno;
    path_.clear();
    refuse_temporary_directory(directory_, reason(error));
  }
  track_temporary(path_);
  ::close(fd);
  stream_.open(path_, std::ios::binary | std::ios::trunc);
  if (!stream_) refuse_temporary_directory(directory_, "cannot open " + excerpt(path_));
}

void ScratchFile::finish() {
  if (stream_.is_open()) stream_.close();
  if (!stream_) refuse_temporary_directory(directory_, "a write failed (is the disk full?)");
}

ScratchFile::~ScratchFile() {
  if (stream_.is_open()) stream_.close();
  if (!path_.empty()) remove_temporary(path_);
}

void ScratchFile::copy_to(std::ostream& out) {
  finish();
  const bool read = read_blocks(path_, [&](const char* data, std::size_t size) {
    out.write(data, static_cast<std::streamsize>(size));
    return true;
  });
  if (!read) refuse_temporary_directory(directory_, "cannot read back " + excerpt(path_));
}

void remove_temporaries_on_signals() {
  for (const int s : kEndingSignals) {
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_die;
    sigemptyset(&action.sa_mask);
    for (const int other : kEndingSignals) sigaddset(&action.sa_mask, other);
    ::sigaction(s, &action, nullptr);
  }
}

void check_output_target(const std::string& path, std::string_view flag) {
  const OutputFile file{path, "", std::string(flag), nullptr};
  const Plan plan = plan_for(file);
  if (plan.in_place) return;
  const std::filesystem::path target(plan.target);
  const std::filesystem::path directory = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) refuse(file, "directory " + excerpt(directory.string()) + " does not exist");
  if (::access(directory.c_str(), W_OK) != 0) refuse(file, reason(errno));
}

void refuse_shared_targets(std::span<const OutputFile> files) {
  std::vector<std::string> targets;
  for (const OutputFile& file : files) {
    if (file.path.empty()) {
      targets.emplace_back();
      continue;
    }
    // The same file by any spelling: a/../x.svg, ./x.svg, a link to it.
    std::error_code error;
    std::filesystem::path canonical = std::filesystem::weakly_canonical(resolved(file), error);
    targets.push_back(error ? file.path : canonical.string());
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (targets[i].empty() || targets[i] != targets[j]) continue;
      throw InputError(files[i].flag + ": " + excerpt(files[i].path) + " is also " + files[j].flag +
                       "'s file; give each output its own");
    }
  }
}

void write_files_atomically(std::span<const OutputFile> files) {
  std::vector<Plan> plans;
  auto remove_temporaries = [&] {
    for (const Plan& plan : plans) {
      if (!plan.temporary.empty()) remove_temporary(plan.temporary);
    }
  };
  refuse_shared_targets(files);
  try {
    for (const OutputFile& file : files) plans.push_back(plan_for(file));
    for (Plan& plan : plans) {
      if (!plan.in_place) write_temporary(plan);
    }
    // FIFOs and devices cannot be replaced atomically; they are written once every regular file is
    // ready, so a failure among those still leaves no file behind.
    for (const Plan& plan : plans) {
      if (plan.in_place) write_in_place(plan);
    }
    // No signal between the first rename and the last: new and old files are never mixed.
    const SignalsHeld held;
    for (Plan& plan : plans) {
      if (plan.in_place) continue;
      if (std::rename(plan.temporary.c_str(), plan.target.c_str()) != 0) refuse(*plan.file, reason(errno));
      untrack_temporary(plan.temporary);
      plan.temporary.clear();
      if (plan.file->spooled != nullptr) plan.file->spooled->committed();  // it is the target now
    }
  } catch (...) {
    remove_temporaries();
    throw;
  }
}

void write_file_atomically(const std::string& path, const std::string& text, std::string_view flag) {
  const OutputFile file{path, text, std::string(flag)};
  write_files_atomically(std::span<const OutputFile>(&file, 1));
}

}  // namespace ppsim
