package tools

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/landjail/landjail/jail"
)

// binarySniff is how many leading bytes are searched for a NUL byte to
// call a file binary: git's heuristic (buffer_is_binary, FIRST_FEW_BYTES
// = 8000).
const binarySniff = 8000

// ReadFileArgs are read_file's arguments.
type ReadFileArgs struct {
	// Path is the file, as the agent gave it (relative to the workspace
	// root, or absolute inside an allowed root).
	Path string `json:"path"`
	// Offset is the first line to return, 1-based; 0 means 1.
	Offset int `json:"offset,omitempty"`
	// Limit is the number of lines to return; 0 or more than
	// Limits.ReadLines means Limits.ReadLines.
	Limit int `json:"limit,omitempty"`
}

// ReadFileResult is what read_file returns.
type ReadFileResult struct {
	Path string `json:"path"`
	// Content is the returned lines, numbered like `cat -n` ("%6d\t").
	Content string `json:"content"`
	// FirstLine and LastLine are the 1-based numbers of the returned
	// lines (0, 0 when none is returned); TotalLines counts the lines of
	// the whole file (a last line without a newline counts).
	FirstLine, LastLine, TotalLines int
	// Bytes is the file size.
	Bytes int64 `json:"bytes"`
	// Binary: a NUL byte in the first 8000 bytes; Content is empty.
	Binary bool `json:"binary"`
	// Truncated: lines after LastLine were not returned (the limit or
	// the output cap); CutLines counts lines shortened to
	// Limits.LineBytes.
	Truncated bool `json:"truncated"`
	CutLines  int  `json:"cut_lines"`
}

// String renders the result for a model.
func (r *ReadFileResult) String() string {
	if r.Binary {
		return fmt.Sprintf("[%s is a binary file (%d bytes); contents not shown]", r.Path, r.Bytes)
	}
	var b strings.Builder
	b.WriteString(r.Content)
	switch {
	case r.TotalLines == 0:
		fmt.Fprintf(&b, "[%s is empty (0 bytes)]", r.Path)
	case r.FirstLine == 0:
		fmt.Fprintf(&b, "[%s has %d lines (%d bytes); no line at that offset]", r.Path, r.TotalLines, r.Bytes)
	default:
		fmt.Fprintf(&b, "[%s: lines %d-%d of %d, %d bytes", r.Path, r.FirstLine, r.LastLine, r.TotalLines, r.Bytes)
		if r.CutLines > 0 {
			fmt.Fprintf(&b, "; %d long lines cut", r.CutLines)
		}
		if r.Truncated {
			fmt.Fprintf(&b, "; truncated, call read_file with offset=%d to continue", r.LastLine+1)
		}
		b.WriteString("]")
	}
	return b.String()
}

// ReadFile is read_file: the lines Offset.. of a text file, numbered,
// at most Limit lines and Limits.ReadBytes bytes of output. The file is
// opened through the Workspace (O_NONBLOCK, so a FIFO cannot hang the
// call) and, with a ReadTracker, marked read, also when only part of it
// is returned. Errors: the Workspace's (jail.ErrOutsideWorkspace, ...),
// ErrOutsideScope, EISDIR for a directory, ErrNotRegular for other
// non-regular files, ErrFileTooLarge for a file larger than
// Limits.FileBytes (refused before any of it is read; see
// Limits.FileBytes).
func (k *Toolkit) ReadFile(a ReadFileArgs) (*ReadFileResult, error) {
	const tool = ToolReadFile
	lim := k.limits()
	if a.Offset < 0 || a.Limit < 0 {
		return nil, k.fail(tool, a.Path, fmt.Errorf("%w: offset and limit must not be negative", ErrInvalidArgs))
	}
	name, err := k.path(a.Path, "")
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	f, err := k.WS.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	if err := regular(fi); err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	if fi.Size() > lim.FileBytes {
		return nil, k.fail(tool, a.Path, tooLarge("read", a.Path, fi.Size(), lim.FileBytes, false))
	}
	r := &ReadFileResult{Path: a.Path, Bytes: fi.Size()}
	// The size may lie (a /proc file says 0) or change: read at most one
	// byte past the cap, and refuse if that byte came.
	lr := &io.LimitedReader{R: f, N: lim.FileBytes + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	head, err := br.Peek(binarySniff)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		return nil, k.fail(tool, a.Path, err)
	}
	if bytes.IndexByte(head, 0) >= 0 {
		r.Binary = true
		return r, nil
	}
	first := max(a.Offset, 1)
	limit := a.Limit
	if limit == 0 || limit > lim.ReadLines {
		limit = lim.ReadLines
	}
	var out strings.Builder
	n := 0
	for {
		line, err := readLine(br, lim.LineBytes)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, k.fail(tool, a.Path, err)
		}
		n++
		if n < first {
			continue
		}
		if r.Truncated || n >= first+limit {
			r.Truncated = true
			continue
		}
		text := line.text
		if line.cut > 0 {
			r.CutLines++
			text += fmt.Sprintf(" … [line cut: %d more bytes]", line.cut)
		}
		entry := fmt.Sprintf("%6d\t%s\n", n, strings.ToValidUTF8(text, "\uFFFD"))
		if out.Len()+len(entry) > lim.ReadBytes && r.FirstLine != 0 {
			r.Truncated = true
			continue
		}
		out.WriteString(entry)
		if r.FirstLine == 0 {
			r.FirstLine = n
		}
		r.LastLine = n
	}
	if lr.N == 0 {
		return nil, k.fail(tool, a.Path, tooLarge("read", a.Path, fi.Size(), lim.FileBytes, true))
	}
	r.TotalLines = n
	r.Content = out.String()
	return r, nil
}

// tooLarge is the error for a file over the cap: grew says the size was
// within the cap but the read went past it.
func tooLarge(op, unsafePath string, size, limit int64, grew bool) error {
	err := fmt.Errorf("%w: the file is %d bytes, more than the cap of %d bytes (landjail-mcp --max-file-size, tools.Limits.FileBytes)", ErrFileTooLarge, size, limit)
	if grew {
		err = fmt.Errorf("%w: reading the file returned more than the cap of %d bytes although its size said %d (it grew, or is a /proc-like file; landjail-mcp --max-file-size, tools.Limits.FileBytes)", ErrFileTooLarge, limit, size)
	}
	return &fs.PathError{Op: op, Path: unsafePath, Err: err}
}

// readCapped reads the whole regular file name through the Workspace
// (read-only, O_NONBLOCK; with a tracker it is marked read), refusing a
// file larger than limit before reading it (fstat on the opened fd) and
// reading at most limit+1 bytes, so neither a lying size nor a file
// growing during the read makes it allocate more than limit+1 bytes.
// Errors: the Workspace's, EISDIR, ErrNotRegular, ErrFileTooLarge in a
// *fs.PathError naming unsafePath.
func (k *Toolkit) readCapped(name, unsafePath string, limit int64) ([]byte, error) {
	f, err := k.WS.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(fi); err != nil {
		return nil, err
	}
	return readAllCapped(f, fi.Size(), limit, unsafePath)
}

// readAllCapped reads r, whose reported size is size, refusing size >
// limit before reading and reading at most limit+1 bytes.
func readAllCapped(r io.Reader, size, limit int64, unsafePath string) ([]byte, error) {
	if size > limit {
		return nil, tooLarge("read", unsafePath, size, limit, false)
	}
	buf := bytes.NewBuffer(make([]byte, 0, max(size, 0)+bytes.MinRead))
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, tooLarge("read", unsafePath, size, limit, true)
	}
	return buf.Bytes(), nil
}

// line is one line of a file, without its newline; cut counts the bytes
// left out beyond the limit.
type line struct {
	text string
	cut  int
}

// readLine reads one line, keeping at most maxBytes bytes of it; io.EOF
// only when nothing is left. A trailing "\r" is dropped.
func readLine(br *bufio.Reader, maxBytes int) (line, error) {
	var buf []byte
	total := 0
	for {
		frag, err := br.ReadSlice('\n')
		total += len(frag)
		if room := maxBytes - len(buf); room > 0 {
			buf = append(buf, frag[:min(room, len(frag))]...)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && total == 0:
			return line{}, io.EOF
		case err != nil && err != io.EOF:
			return line{}, err
		}
		size := total
		if err == nil {
			size-- // the newline is not part of the text
		}
		if len(buf) > size {
			buf = buf[:size]
		}
		cut := size - len(buf)
		if cut == 0 {
			buf = bytes.TrimSuffix(buf, []byte("\r"))
		}
		return line{text: string(buf), cut: cut}, nil
	}
}

// regular returns nil for a regular file, EISDIR for a directory,
// ErrNotRegular otherwise.
func regular(fi fs.FileInfo) error {
	switch {
	case fi.Mode().IsRegular():
		return nil
	case fi.IsDir():
		return syscall.EISDIR
	}
	return fmt.Errorf("%w (%s)", ErrNotRegular, kind(fi.Mode()))
}

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// WriteFileArgs are write_file's arguments.
type WriteFileArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// WriteFileResult is what write_file returns.
type WriteFileResult struct {
	Path    string `json:"path"`
	Bytes   int    `json:"bytes"`
	Lines   int    `json:"lines"`
	Created bool   `json:"created"`
}

// String renders the result for a model.
func (r *WriteFileResult) String() string {
	verb := "Overwrote"
	if r.Created {
		verb = "Created"
	}
	return fmt.Sprintf("%s %s: %d lines, %d bytes", verb, r.Path, r.Lines, r.Bytes)
}

// WriteFile is write_file: it writes Content to Path atomically through
// Workspace.WriteFile (a temporary file, fsync, rename; an existing
// file's permissions are kept), creating missing parent directories
// (0755 before umask) once the policy allows writing the file. Errors:
// the Workspace's, notably jail.ErrNotRead and jail.ErrStale for an
// existing file not read, or changed, since the last read_file;
// ErrOutsideScope.
func (k *Toolkit) WriteFile(a WriteFileArgs) (*WriteFileResult, error) {
	const tool = ToolWriteFile
	name, err := k.path(a.Path, "")
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	if limit := k.limits().FileBytes; int64(len(a.Content)) > limit {
		return nil, k.fail(tool, a.Path, &fs.PathError{Op: "write", Path: a.Path, Err: fmt.Errorf("%w: the content is %d bytes, more than the cap of %d bytes (landjail-mcp --max-file-size, tools.Limits.FileBytes)", ErrFileTooLarge, len(a.Content), limit)})
	}
	if _, err := k.WS.Check(name, jail.Write); err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	created := false
	var made []string
	if _, err := k.WS.Stat(name); errors.Is(err, fs.ErrNotExist) {
		created = true
		if made, err = k.mkdirParents(name); err != nil {
			k.removeMade(made)
			return nil, k.fail(tool, a.Path, err)
		}
	} else if err == nil {
		// Replacing a file needs what writing it in place needs, as
		// edit_file's and patch's probes check: its mode bits for this
		// thread (no CAP_DAC_OVERRIDE), and a regular file. A root
		// server replaced another user's 0444 or 0644 file by rename,
		// and the owner restore made the agent's content theirs, while
		// bash, edit_file and patch were refused (red team round 28,
		// R28a-1).
		if err := k.writableInPlace(name); err != nil {
			return nil, k.fail(tool, a.Path, err)
		}
	}
	if err := k.WS.WriteFile(name, []byte(a.Content), 0o644); err != nil {
		// A failed call leaves nothing behind: not the directories it
		// made either (red team round 27, R27e-3: a/b/c stayed after
		// "no space left on device").
		k.removeMade(made)
		return nil, k.fail(tool, a.Path, err)
	}
	return &WriteFileResult{Path: a.Path, Bytes: len(a.Content), Lines: countLines(a.Content), Created: created}, nil
}

// writableInPlace reports, as an error, why name (a Workspace name)
// could not be written in place: it is not a regular file
// (ErrNotRegular: nothing but a regular file is opened, a device node in the
// workspace is not opened for writing, red team round 30, R30a-3), or
// its mode bits refuse a write: the O_WRONLY probe is made on that
// inode alone (opened O_PATH first, never by its name again), the same
// proof WriteFile makes before it replaces a file and copies its owner
// from the file that passed it (R28a-1, R30a-1). write_file and
// edit_file check with it before they replace a file.
func (k *Toolkit) writableInPlace(name string) error {
	_, err := k.WS.ProbeWritable(name)
	if errors.Is(err, syscall.EINVAL) {
		// Not a regular file: say which kind (a stat, nothing opened).
		if fi, serr := k.WS.Stat(name); serr == nil {
			if rerr := regular(fi); rerr != nil {
				return rerr
			}
		}
	}
	return err
}

// countLines counts lines as read_file numbers them: a last line without
// a newline counts.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// EditFileArgs are edit_file's arguments.
type EditFileArgs struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// EditFileResult is what edit_file returns.
type EditFileResult struct {
	Path         string `json:"path"`
	Replacements int    `json:"replacements"`
	Bytes        int    `json:"bytes"`
	Lines        int    `json:"lines"`
	// Snippet shows the file around the first replacement, numbered like
	// read_file.
	Snippet string `json:"snippet"`
}

// String renders the result for a model.
func (r *EditFileResult) String() string {
	s := "occurrence"
	if r.Replacements != 1 {
		s += "s"
	}
	return fmt.Sprintf("Replaced %d %s in %s (now %d lines, %d bytes). Around the first change:\n%s",
		r.Replacements, s, r.Path, r.Lines, r.Bytes, r.Snippet)
}

// EditFile is edit_file: exact-string replacement. Before reading, it
// asks the Workspace whether the file may be overwritten (a write-only
// O_NONBLOCK open that neither truncates nor writes), so an unread file
// fails with jail.ErrNotRead and a file changed since the last read_file
// with jail.ErrStale; a change between edit_file's own read and its
// atomic write fails with jail.ErrStale too. Errors also: ErrNoMatch,
// ErrAmbiguous (old_string found more than once without ReplaceAll),
// ErrInvalidArgs (empty old_string, or equal to new_string),
// ErrNotRegular, ErrFileTooLarge (a file larger than Limits.FileBytes,
// refused before any of it is read, see Limits.FileBytes; or an edit
// whose result would be larger, refused before it is built), the
// Workspace's.
func (k *Toolkit) EditFile(a EditFileArgs) (*EditFileResult, error) {
	const tool = ToolEditFile
	switch {
	case a.OldString == "":
		return nil, k.fail(tool, a.Path, fmt.Errorf("%w: old_string is empty (use write_file to create or replace a whole file)", ErrInvalidArgs))
	case a.OldString == a.NewString:
		return nil, k.fail(tool, a.Path, fmt.Errorf("%w: old_string and new_string are the same", ErrInvalidArgs))
	}
	name, err := k.path(a.Path, "")
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	if err := k.writableInPlace(name); err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	data, err := k.readCapped(name, a.Path, k.limits().FileBytes)
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	old := string(data)
	n := strings.Count(old, a.OldString)
	switch {
	case n == 0:
		return nil, k.fail(tool, a.Path, fmt.Errorf("%w: check whitespace and indentation, or read_file it again", ErrNoMatch))
	case n > 1 && !a.ReplaceAll:
		return nil, k.fail(tool, a.Path, fmt.Errorf("%w: it occurs %d times; add surrounding context to make it unique, or set replace_all", ErrAmbiguous, n))
	}
	// ReplaceAll allocates the result at once: 10 MiB of "a" with every
	// "a" replaced by 1 KiB would be 10 GiB. Refuse a result over the cap
	// before building it.
	if grown := int64(len(old)) + int64(replacements(n, a.ReplaceAll))*(int64(len(a.NewString))-int64(len(a.OldString))); grown > k.limits().FileBytes {
		return nil, k.fail(tool, a.Path, &fs.PathError{Op: "edit", Path: a.Path, Err: fmt.Errorf("%w: the edited file would be %d bytes, more than the cap of %d bytes (landjail-mcp --max-file-size, tools.Limits.FileBytes)", ErrFileTooLarge, grown, k.limits().FileBytes)})
	}
	at := strings.Index(old, a.OldString)
	var updated string
	if a.ReplaceAll {
		updated = strings.ReplaceAll(old, a.OldString, a.NewString)
	} else {
		updated = old[:at] + a.NewString + old[at+len(a.OldString):]
	}
	if err := k.WS.WriteFile(name, []byte(updated), 0o644); err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	return &EditFileResult{
		Path: a.Path, Replacements: replacements(n, a.ReplaceAll),
		Bytes: len(updated), Lines: countLines(updated),
		Snippet: snippet(updated, at, len(a.NewString), k.limits().LineBytes),
	}, nil
}

func replacements(n int, all bool) int {
	if all {
		return n
	}
	return 1
}

// snippet returns the lines of s from 3 before the byte range [at,
// at+n) to 3 after it (at most 20 lines), numbered like read_file.
func snippet(s string, at, n, lineBytes int) string {
	first := strings.Count(s[:at], "\n") + 1
	last := first + strings.Count(s[at:at+n], "\n")
	from, to := max(first-3, 1), min(last+3, first+20)
	var b strings.Builder
	for i, l := range strings.SplitAfter(s, "\n") {
		ln := i + 1
		if ln < from || l == "" {
			continue
		}
		if ln > to {
			break
		}
		l = strings.TrimSuffix(l, "\n")
		if len(l) > lineBytes {
			l = l[:lineBytes] + " … [line cut]"
		}
		fmt.Fprintf(&b, "%6d\t%s\n", ln, strings.ToValidUTF8(l, "\uFFFD"))
	}
	return b.String()
}

// ListDirectoryArgs are list_directory's arguments.
type ListDirectoryArgs struct {
	// Path is the directory; "" means the workspace root (or the first
	// root of a narrowed Toolkit).
	Path string `json:"path,omitempty"`
}

// Entry is one list_directory entry.
type Entry struct {
	Name string `json:"name"`
	// Type is "d" directory, "f" regular file, "l" symlink, "?" other.
	Type string `json:"type"`
	// Size in bytes, for regular files.
	Size int64 `json:"size,omitempty"`
}

// ListDirectoryResult is what list_directory returns.
type ListDirectoryResult struct {
	Path    string  `json:"path"`
	Entries []Entry `json:"entries"`
	// Total is the number of entries before the cap.
	Total     int  `json:"total"`
	Truncated bool `json:"truncated"`
}

// String renders the result for a model.
func (r *ListDirectoryResult) String() string {
	var b strings.Builder
	for _, e := range r.Entries {
		switch e.Type {
		case "d":
			fmt.Fprintf(&b, "d %s/\n", e.Name)
		case "f":
			fmt.Fprintf(&b, "f %s (%d bytes)\n", e.Name, e.Size)
		case "l":
			fmt.Fprintf(&b, "l %s@\n", e.Name)
		default:
			fmt.Fprintf(&b, "? %s\n", e.Name)
		}
	}
	fmt.Fprintf(&b, "[%s: %d entries", r.Path, r.Total)
	if r.Truncated {
		fmt.Fprintf(&b, "; only the first %d shown", len(r.Entries))
	}
	b.WriteString("]")
	return b.String()
}

// ListDirectory is list_directory: Workspace.ReadDirN (entries matching a
// deny pattern are left out), sorted by name, the first
// Limits.ListEntries shown and all counted. Symlinks are shown as such,
// never followed.
func (k *Toolkit) ListDirectory(a ListDirectoryArgs) (*ListDirectoryResult, error) {
	const tool = ToolListDirectory
	name, err := k.path(a.Path, ".")
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	ents, total, err := k.WS.ReadDirN(name, k.limits().ListEntries)
	if err != nil {
		return nil, k.fail(tool, a.Path, err)
	}
	shown := a.Path
	if shown == "" {
		shown = name
	}
	r := &ListDirectoryResult{Path: shown, Total: total, Truncated: total > len(ents)}
	for _, d := range ents {
		e := Entry{Name: d.Name(), Type: "?"}
		switch t := d.Type(); {
		case t.IsDir():
			e.Type = "d"
		case t&fs.ModeSymlink != 0:
			e.Type = "l"
		case t.IsRegular():
			e.Type = "f"
			if fi, err := d.Info(); err == nil {
				e.Size = fi.Size()
			}
		}
		r.Entries = append(r.Entries, e)
	}
	return r, nil
}
