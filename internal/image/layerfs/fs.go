package layerfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// FS is an image's flattened filesystem, held in memory with large files
// spilled to a private temporary directory. It implements fs.FS, fs.StatFS,
// fs.ReadDirFS, fs.ReadFileFS and fs.ReadLinkFS. Symbolic links resolve inside
// the image root (absolute targets are relative to it, as in a container).
// Close it to remove spilled files.
type FS struct {
	root   *node
	tmpDir string
	// mem and disk are the bytes of file content held now, in memory and
	// in spilled files; total is every regular file's size as declared,
	// summed over all layers applied (a layer applied twice counts twice,
	// overwritten files still count), so it only grows.
	mem, disk, total int64
	entries          int
	layers           int
	lim              fsLimits
}

type fsLimits struct {
	maxEntry   int64
	maxTotal   int64
	maxSpill   int64
	spillFile  int64
	spillTotal int64
	tempDir    string
}

// content is a file's data, shared by the hard links to it; it is counted
// in FS.mem or FS.disk once, and released when the last link goes.
type content struct {
	data  []byte
	spill string // temporary file holding the data, if spilled
	size  int64
	refs  int
}

// maxEntries bounds the number of files so a layer of millions of empty
// files cannot exhaust memory.
const maxEntries = 1 << 20

type node struct {
	mode    fs.FileMode // type bits and permissions
	size    int64
	modTime time.Time
	content *content // regular files
	target  string   // symlink target
	kids    map[string]*node
	layer   int // last layer that declared or traversed this node
}

func (n *node) isDir() bool     { return n.mode.IsDir() }
func (n *node) isSymlink() bool { return n.mode&fs.ModeSymlink != 0 }

// Limits bound what an FS accepts and keeps in memory.
type Limits struct {
	// MaxEntry is the largest file accepted (checked on the tar header; a
	// GNU sparse file counts its expanded size).
	MaxEntry int64
	// MaxTotal caps the sum of the sizes of all regular files of all layers
	// applied, holes of sparse files included: a layer listed twice, or a
	// file overwritten, counts again.
	MaxTotal int64
	// MaxSpill caps the bytes held in spilled temporary files at any time
	// (0: MaxTotal).
	MaxSpill int64
	// Files up to SpillFile bytes stay in memory while the total stays under
	// SpillTotal; others go to a temporary directory under TempDir ("" is os.TempDir()).
	SpillFile, SpillTotal int64
	TempDir               string
}

// Defaults for zero Limits fields.
const (
	DefaultMaxEntry  int64 = 512 << 20
	DefaultMaxTotal  int64 = 256 << 20
	DefaultSpillFile int64 = 32 << 20
	// DefaultSpillTotal leaves room under a 300 MB peak RSS for the rest of
	// a run (parsing, the index).
	DefaultSpillTotal int64 = 128 << 20
)

// New returns an empty filesystem. Apply layers to it with ApplyLayer.
func New(lim Limits) *FS {
	if lim.MaxEntry <= 0 {
		lim.MaxEntry = DefaultMaxEntry
	}
	if lim.SpillFile <= 0 {
		lim.SpillFile = DefaultSpillFile
	}
	if lim.SpillTotal <= 0 {
		lim.SpillTotal = DefaultSpillTotal
	}
	if lim.MaxTotal <= 0 {
		lim.MaxTotal = DefaultMaxTotal
	}
	if lim.MaxSpill <= 0 {
		lim.MaxSpill = lim.MaxTotal
	}
	return &FS{
		root: &node{mode: fs.ModeDir | 0o755, kids: map[string]*node{}},
		lim:  fsLimits{maxEntry: lim.MaxEntry, maxTotal: lim.MaxTotal, maxSpill: lim.MaxSpill, spillFile: lim.SpillFile, spillTotal: lim.SpillTotal, tempDir: lim.TempDir},
	}
}

// Usage is what the FS holds now: file bytes in memory and in spilled
// files, and the declared size of every regular file applied so far.
func (f *FS) Usage() (mem, disk, total int64) { return f.mem, f.disk, f.total }

// Close removes spilled files. The FS must not be used afterwards.
func (f *FS) Close() error {
	if f.tmpDir == "" {
		return nil
	}
	err := os.RemoveAll(f.tmpDir)
	f.tmpDir = ""
	return err
}

// maxSymlinkHops matches Linux's limit on symbolic links followed in one lookup.
const maxSymlinkHops = 40

var errSymlinkLoop = errors.New("too many levels of symbolic links")

// resolve finds name, following symbolic links (the last one only if followLast).
func (f *FS) resolve(op, name string, followLast bool) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	comps := splitPath(name)
	stack := []*node{f.root}
	hops := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		switch c {
		case "", ".":
			continue
		case "..": // only from symlink targets; the root is its own parent
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		cur := stack[len(stack)-1]
		if !cur.isDir() {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		child := cur.kids[c]
		if child == nil {
			return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
		}
		if child.isSymlink() && (len(comps) > 0 || followLast) {
			if hops++; hops > maxSymlinkHops {
				return nil, &fs.PathError{Op: op, Path: name, Err: errSymlinkLoop}
			}
			if strings.HasPrefix(child.target, "/") {
				stack = stack[:1]
			}
			comps = append(splitPath(child.target), comps...)
			continue
		}
		stack = append(stack, child)
	}
	return stack[len(stack)-1], nil
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// Open implements fs.FS.
func (f *FS) Open(name string) (fs.File, error) {
	n, err := f.resolve("open", name, true)
	if err != nil {
		return nil, err
	}
	info := fileInfo{name: path.Base(name), n: n}
	if n.isDir() {
		return &dirFile{info: info, entries: f.dirEntries(n)}, nil
	}
	if n.content.spill != "" {
		osf, err := os.Open(n.content.spill)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: err}
		}
		return &spillFile{File: osf, info: info}, nil
	}
	return &memFile{Reader: bytes.NewReader(n.content.data), info: info}, nil
}

// Stat implements fs.StatFS.
func (f *FS) Stat(name string) (fs.FileInfo, error) {
	n, err := f.resolve("stat", name, true)
	if err != nil {
		return nil, err
	}
	return fileInfo{name: path.Base(name), n: n}, nil
}

// Lstat implements fs.ReadLinkFS: it does not follow a final symbolic link.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	n, err := f.resolve("lstat", name, false)
	if err != nil {
		return nil, err
	}
	return fileInfo{name: path.Base(name), n: n}, nil
}

// ReadLink implements fs.ReadLinkFS.
func (f *FS) ReadLink(name string) (string, error) {
	n, err := f.resolve("readlink", name, false)
	if err != nil {
		return "", err
	}
	if !n.isSymlink() {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrInvalid}
	}
	return n.target, nil
}

// ReadDir implements fs.ReadDirFS, sorted by name.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := f.resolve("readdir", name, true)
	if err != nil {
		return nil, err
	}
	if !n.isDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	return f.dirEntries(n), nil
}

// ReadFile implements fs.ReadFileFS.
func (f *FS) ReadFile(name string) ([]byte, error) {
	n, err := f.resolve("read", name, true)
	if err != nil {
		return nil, err
	}
	if n.isDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	if n.content.spill != "" {
		return os.ReadFile(n.content.spill)
	}
	return slices.Clone(n.content.data), nil
}

func (f *FS) dirEntries(n *node) []fs.DirEntry {
	names := make([]string, 0, len(n.kids))
	for k := range n.kids {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]fs.DirEntry, len(names))
	for i, k := range names {
		out[i] = fs.FileInfoToDirEntry(fileInfo{name: k, n: n.kids[k]})
	}
	return out
}

type fileInfo struct {
	name string
	n    *node
}

func (i fileInfo) Name() string {
	if i.name == "" || i.name == "/" {
		return "."
	}
	return i.name
}
func (i fileInfo) Size() int64        { return i.n.size }
func (i fileInfo) Mode() fs.FileMode  { return i.n.mode }
func (i fileInfo) ModTime() time.Time { return i.n.modTime }
func (i fileInfo) IsDir() bool        { return i.n.isDir() }
func (i fileInfo) Sys() any           { return nil }

type memFile struct {
	*bytes.Reader
	info fileInfo
}

func (m *memFile) Stat() (fs.FileInfo, error) { return m.info, nil }
func (m *memFile) Close() error               { return nil }

type spillFile struct {
	*os.File
	info fileInfo
}

func (s *spillFile) Stat() (fs.FileInfo, error) { return s.info, nil }

type dirFile struct {
	info    fileInfo
	entries []fs.DirEntry
	off     int
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dirFile) Close() error               { return nil }
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.info.name, Err: errors.New("is a directory")}
}

func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.entries[d.off:]
	if n <= 0 {
		d.off = len(d.entries)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(rest))
	d.off += n
	return rest[:n], nil
}
