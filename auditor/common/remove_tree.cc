#include "common/remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

namespace repro_audit {
namespace {

// Where an entry lies: its filesystem, and the mount it was reached through. A bind mount of a folder
// of the same filesystem has the same device, and only the mount id tells it apart.
struct Place {
  dev_t device = 0;
  std::uint64_t mount = 0;
  bool has_mount = false;
  bool folder = false;
};

bool place_of(int folder_fd, const char* name, Place& place) {
  struct statx status {};
  if (::statx(folder_fd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_TYPE | STATX_MNT_ID, &status) != 0)
    return false;
  place.device = makedev(status.stx_dev_major, status.stx_dev_minor);
  place.has_mount = (status.stx_mask & STATX_MNT_ID) != 0;
  place.mount = status.stx_mnt_id;
  place.folder = S_ISDIR(status.stx_mode);
  return true;
}

bool same_mount(const Place& a, const Place& b) {
  return a.device == b.device && (!a.has_mount || !b.has_mount || a.mount == b.mount);
}

constexpr int kMaximumDepth = 256;

// Removes what the open folder `fd` holds, staying on `root`'s mount; true when all of it went.
bool empty_folder(int fd, const Place& root, int depth) {
  const int listing = ::dup(fd);
  DIR* dir = listing >= 0 ? ::fdopendir(listing) : nullptr;
  if (!dir) {
    if (listing >= 0) ::close(listing);
    return false;
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  bool all = true;
  for (const auto& name : names) {
    Place place;
    if (!place_of(fd, name.c_str(), place)) {
      all = all && errno == ENOENT;
      continue;
    }
    if (!place.folder) {  // a file, a link (never followed), a FIFO, a device
      if (::unlinkat(fd, name.c_str(), 0) != 0 && errno != ENOENT) all = false;
      continue;
    }
    if (!same_mount(place, root) || depth >= kMaximumDepth) {  // a mount point: it and what holds it stay
      all = false;
      continue;
    }
    const int child = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) {
      all = false;
      continue;
    }
    const bool emptied = empty_folder(child, root, depth + 1);
    ::close(child);
    if (!emptied || ::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0) all = false;
  }
  return all;
}

}  // namespace

bool remove_tree(const std::string& folder) {
  Place root;
  if (!place_of(AT_FDCWD, folder.c_str(), root)) return errno == ENOENT;
  if (!root.folder) return ::unlink(folder.c_str()) == 0 || errno == ENOENT;
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  const bool emptied = empty_folder(fd, root, 0);
  ::close(fd);
  return emptied && (::rmdir(folder.c_str()) == 0 || errno == ENOENT);
}

}  // namespace repro_audit
