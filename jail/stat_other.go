//go:build !linux

package jail

import "golang.org/x/sys/unix"

func versionOf(st *unix.Stat_t) fileVersion {
	return fileVersion{
		known: true,
		dev:   uint64(st.Dev), ino: uint64(st.Ino),
		size:      st.Size,
		mtimeNsec: st.Mtim.Nano(),
	}
}
