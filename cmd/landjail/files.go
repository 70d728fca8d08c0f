package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/landjail/landjail/openat"
)

// Files landjail creates or writes on the command's behalf. The command may
// change anything in its writable roots, while it runs and in earlier runs,
// so none of these is ever reached again by a path after the command
// started: each is opened (or created) first, and used through that
// descriptor.

// reportFile is the --report file, opened before the command starts.
type reportFile struct {
	f        *os.File
	name     string
	dev, ino uint64
}

// openReport opens (creating it 0644 if needed) the report file name for
// writing, before the command starts. Equivalent to remembering the name
// and calling os.WriteFile(name, ...) at the end, but safe because the
// command cannot redirect it: no symbolic link is followed in any
// component (openat2 RESOLVE_NO_SYMLINKS from /, or the O_NOFOLLOW walk
// without openat2: a link planted by an earlier run fails instead of
// writing through it), O_NONBLOCK so that a FIFO cannot block, and only a
// regular file with a single link is accepted (a hard link planted earlier
// would make landjail overwrite its other name). It is not truncated until
// the report is written. Errors (exit 125): the open's (*fs.PathError,
// ELOOP for a symlink), or a refusal naming the file type or link count.
func openReport(name string) (*reportFile, error) {
	abs := name
	if !filepath.IsAbs(abs) {
		wd, err := unix.Getwd() // the kernel's canonical cwd, not $PWD
		if err != nil {
			return nil, fmt.Errorf("--report %s: getcwd: %w", name, err)
		}
		abs = filepath.Join(wd, abs)
	}
	// Lexical cleaning is exact here: ".." cannot follow a symlink that
	// is refused anyway.
	rel := strings.TrimPrefix(filepath.Clean(abs), "/")
	root, err := openat.OpenRoot("/")
	if err != nil {
		return nil, fmt.Errorf("--report: %w", err)
	}
	defer root.Close()
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0o644)
	if err != nil {
		if errors.Is(err, openat.ErrSymlink) {
			return nil, fmt.Errorf("--report %s: a component is a symbolic link (give the real path): %w", name, err)
		}
		return nil, fmt.Errorf("--report: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, fmt.Errorf("--report %s: fstat: %w", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return nil, fmt.Errorf("--report %s: not a regular file (mode %#o)", name, st.Mode&unix.S_IFMT)
	}
	if st.Nlink != 1 {
		f.Close()
		return nil, fmt.Errorf("--report %s: has %d hard links (refusing to write through another name)", name, st.Nlink)
	}
	// Back to blocking writes (a regular file never blocks anyway).
	if err := unix.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, fmt.Errorf("--report %s: %w", name, err)
	}
	return &reportFile{f: f, name: name, dev: st.Dev, ino: st.Ino}, nil
}

// write replaces the report file's contents with r through the descriptor
// opened before the command started. If the name no longer leads to that
// file (the command renamed, removed or replaced it, or a parent
// directory), it says so on stderr: the report went to the original file.
// A nil reportFile writes nothing.
func (rf *reportFile) write(r *runReport, stderr io.Writer) error {
	if rf == nil {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := rf.f.Truncate(0); err != nil {
		return fmt.Errorf("--report %s: %w", rf.name, err)
	}
	if _, err := rf.f.WriteAt(b, 0); err != nil {
		return fmt.Errorf("--report %s: %w", rf.name, err)
	}
	var st unix.Stat_t
	if unix.Lstat(rf.name, &st) != nil || st.Dev != rf.dev || st.Ino != rf.ino {
		fmt.Fprintf(stderr, "landjail: warning: --report %s was moved or replaced while the command ran; the report was written to the file opened before it started, not to what the name leads to now\n", rf.name)
	}
	return nil
}

func (rf *reportFile) close() {
	if rf != nil {
		rf.f.Close()
	}
}
