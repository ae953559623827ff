#include "study/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <vector>

#include "schedules/excerpt.hpp"
#include "study/errors.hpp"

namespace ppsim {
namespace {

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
// kernel does; the path as given when it is not a link.
std::string resolved(const std::string& path) {
  std::filesystem::path current(path);
  std::error_code error;
  for (int links = 0; links < 40 && std::filesystem::is_symlink(std::filesystem::symlink_status(current, error));
       ++links) {
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
  plan.target = resolved(file.path);
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

// A unique temporary file (mkstemp) for `target`: beside it, so that rename is atomic.
int make_temporary(const std::string& target, std::string& path) {
  const std::filesystem::path file(target);
  const std::filesystem::path directory = file.has_parent_path() ? file.parent_path() : ".";
  path = (directory / ("." + file.filename().string() + ".ppsim-XXXXXX")).string();
  return ::mkstemp(path.data());
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

SpooledFile::SpooledFile(std::string path, std::string flag) : path_(std::move(path)), flag_(std::move(flag)) {
  const OutputFile file{path_, "", flag_, nullptr};
  const Plan plan = plan_for(file);
  // A FIFO or a device is written in place at the end; its contents wait in the temporary directory.
  const std::string beside =
      plan.in_place ? (temporary_directory() / "ppsim-spool").string() : plan.target;
  const int fd = make_temporary(beside, temporary_);
  if (fd < 0) refuse(file, reason(errno));
  ::close(fd);
  stream_.open(temporary_, std::ios::binary | std::ios::trunc);
  if (!stream_) {
    std::remove(temporary_.c_str());
    refuse(file, "cannot open its temporary file");
  }
}

SpooledFile::~SpooledFile() {
  close();
  if (!temporary_.empty()) std::remove(temporary_.c_str());
}

ScratchFile::ScratchFile() {
  path_ = (temporary_directory() / "ppsim-scratch-XXXXXX").string();
  const int fd = ::mkstemp(path_.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + path_ + ": " + reason(errno));
  ::close(fd);
  stream_.open(path_, std::ios::binary | std::ios::trunc);
  if (!stream_) {
    std::remove(path_.c_str());
    throw std::runtime_error("cannot open a temporary file " + path_);
  }
}

void ScratchFile::finish() {
  if (stream_.is_open()) stream_.close();
  if (!stream_) throw std::runtime_error("cannot write a temporary file (disk full?)");
}

ScratchFile::~ScratchFile() {
  if (stream_.is_open()) stream_.close();
  std::remove(path_.c_str());
}

void ScratchFile::copy_to(std::ostream& out) {
  finish();
  const bool read = read_blocks(path_, [&](const char* data, std::size_t size) {
    out.write(data, static_cast<std::streamsize>(size));
    return true;
  });
  if (!read) throw std::runtime_error("cannot read a temporary file");
}

void write_files_atomically(std::span<const OutputFile> files) {
  std::vector<Plan> plans;
  auto remove_temporaries = [&] {
    for (const Plan& plan : plans) {
      if (!plan.temporary.empty()) std::remove(plan.temporary.c_str());
    }
  };
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
    for (Plan& plan : plans) {
      if (plan.in_place) continue;
      if (std::rename(plan.temporary.c_str(), plan.target.c_str()) != 0) refuse(*plan.file, reason(errno));
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
