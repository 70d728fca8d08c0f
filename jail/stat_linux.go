package jail

import "golang.org/x/sys/unix"

func versionOf(st *unix.Stat_t) fileVersion {
	return fileVersion{
		known: true,
		dev:   st.Dev, ino: st.Ino,
		size:      st.Size,
		mtimeNsec: st.Mtim.Nano(),
	}
}
