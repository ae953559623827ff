#include "tools/ppsim/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include "schedules/excerpt.hpp"
#include "tools/ppsim/errors.hpp"

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

// A unique temporary in the target's directory (so that rename is atomic), holding the text.
void write_temporary(Plan& plan) {
  const std::filesystem::path target(plan.target);
  const std::filesystem::path directory = target.has_parent_path() ? target.parent_path() : ".";
  std::string pattern = (directory / ("." + target.filename().string() + ".ppsim-XXXXXX")).string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) refuse(*plan.file, reason(errno));
  plan.temporary = pattern;
  const bool ok = write_all(fd, plan.file->text) && ::fchmod(fd, plan.mode) == 0;
  const int error = errno;
  if (::close(fd) != 0 || !ok) refuse(*plan.file, reason(ok ? errno : error));
}

void write_in_place(const Plan& plan) {
  const int fd = ::open(plan.target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) refuse(*plan.file, reason(errno));
  const bool ok = write_all(fd, plan.file->text);
  const int error = errno;
  if (::close(fd) != 0 || !ok) refuse(*plan.file, reason(ok ? errno : error));
}

}  // namespace

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
