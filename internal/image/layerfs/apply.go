package layerfs

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Whiteout names (OCI image spec, layer changesets).
const (
	WhiteoutPrefix = ".wh."
	WhiteoutOpaque = ".wh..wh..opq"
)

// ApplyLayer applies one uncompressed tar layer on top of f, honouring
// whiteouts (.wh.NAME) and opaque directories (.wh..wh..opq). The digest
// only labels errors.
func (f *FS) ApplyLayer(ctx context.Context, r io.Reader, digest string) error {
	f.layers++
	tr := tar.NewReader(r)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var le *LayerError
			if errors.As(err, &le) {
				return err
			}
			return Errorf(digest, "", "bad tar stream: %v", err)
		}
		if err := f.applyEntry(tr, hdr, digest); err != nil {
			return err
		}
	}
}

// EntryPath splits a tar entry name into clean components, refusing absolute
// paths and any "..": no legitimate layer needs them, and a naive extractor
// would write outside its target.
func EntryPath(layer, entry, name string) ([]string, error) {
	if strings.HasPrefix(name, "/") {
		return nil, Errorf(layer, entry, "absolute path; layer entries must be relative to the image root")
	}
	var comps []string
	for _, c := range strings.Split(name, "/") {
		switch c {
		case "", ".":
		case "..":
			return nil, Errorf(layer, entry, "path escapes the image root through \"..\"")
		default:
			comps = append(comps, c)
		}
	}
	return comps, nil
}

func (f *FS) applyEntry(tr *tar.Reader, hdr *tar.Header, digest string) error {
	entry := hdr.Name
	comps, err := EntryPath(digest, entry, hdr.Name)
	if err != nil {
		return err
	}
	switch hdr.Typeflag {
	case tar.TypeChar, tar.TypeBlock:
		return Errorf(digest, entry, "device node (character and block devices are refused)")
	case tar.TypeFifo:
		return Errorf(digest, entry, "named pipe (FIFOs are refused)")
	case tar.TypeXGlobalHeader:
		return nil
	}
	if hdr.Size > f.lim.maxEntry || hdr.Size < 0 {
		return Errorf(digest, entry, "size %s is over the %s limit (%s)", HumanSize(hdr.Size), HumanSize(f.lim.maxEntry), LimitHint)
	}
	if len(comps) == 0 {
		if hdr.Typeflag == tar.TypeDir {
			return nil // the root itself
		}
		return Errorf(digest, entry, "entry names the image root but is not a directory")
	}
	parent, err := f.dirForWrite(comps[:len(comps)-1], digest, entry)
	if err != nil {
		return err
	}
	base := comps[len(comps)-1]
	if strings.HasPrefix(base, WhiteoutPrefix) {
		return f.whiteout(parent, base, digest, entry)
	}
	n := &node{mode: fs.FileMode(hdr.Mode).Perm(), modTime: hdr.ModTime, layer: f.layers}
	switch hdr.Typeflag {
	case tar.TypeDir:
		if old := parent.kids[base]; old != nil && old.isDir() {
			old.mode, old.modTime, old.layer = fs.ModeDir|n.mode, n.modTime, f.layers
			return nil
		}
		n.mode |= fs.ModeDir
		n.kids = map[string]*node{}
	case tar.TypeReg, tar.TypeGNUSparse:
		// hdr.Size of a GNU sparse entry is its expanded size: a few bytes
		// of sparse map can stand for gigabytes of holes.
		if f.total += hdr.Size; f.total > f.lim.maxTotal {
			return Errorf(digest, entry, "the image's files add up to more than the %s limit (%s; this entry is %s; layers listed several times count each time)",
				HumanSize(f.lim.maxTotal), TotalHint, HumanSize(hdr.Size))
		}
		n.size = hdr.Size
		if err := f.storeData(n, tr, digest, entry); err != nil {
			return err
		}
	case tar.TypeSymlink:
		if err := checkSymlink(comps, hdr.Linkname); err != nil {
			return Errorf(digest, entry, "%v", err)
		}
		n.mode |= fs.ModeSymlink
		n.target = hdr.Linkname
		n.size = int64(len(hdr.Linkname))
	case tar.TypeLink:
		target, err := f.linkTarget(hdr.Linkname, digest, entry)
		if err != nil {
			return err
		}
		n.size, n.content = target.size, target.content
		n.content.refs++
	default:
		return Errorf(digest, entry, "unsupported tar entry type %q", hdr.Typeflag)
	}
	if old := parent.kids[base]; old != nil {
		f.drop(old)
	}
	if f.entries++; f.entries > maxEntries {
		return Errorf(digest, entry, "image has more than %d files", maxEntries)
	}
	parent.kids[base] = n
	return nil
}

// dirForWrite walks to the directory an entry goes into, creating missing
// directories. It refuses to pass through a symbolic link: that is how a layer
// makes a naive extractor write outside its target.
func (f *FS) dirForWrite(comps []string, digest, entry string) (*node, error) {
	cur := f.root
	for i, c := range comps {
		child := cur.kids[c]
		switch {
		case child == nil:
			if f.entries++; f.entries > maxEntries {
				return nil, Errorf(digest, entry, "image has more than %d files", maxEntries)
			}
			child = &node{mode: fs.ModeDir | 0o755, kids: map[string]*node{}}
			cur.kids[c] = child
		case child.isSymlink():
			return nil, Errorf(digest, entry, "parent %q is a symbolic link; writing through symbolic links is refused", strings.Join(comps[:i+1], "/"))
		case !child.isDir():
			return nil, Errorf(digest, entry, "parent %q is not a directory", strings.Join(comps[:i+1], "/"))
		}
		child.layer = f.layers // traversed by this layer: an opaque whiteout above keeps it
		cur = child
	}
	return cur, nil
}

// whiteout removes what lower layers put at parent/NAME (.wh.NAME) or in
// parent (.wh..wh..opq). Entries of the current layer survive whatever the
// order inside the tar.
func (f *FS) whiteout(parent *node, base, digest, entry string) error {
	if base == WhiteoutOpaque {
		f.pruneLower(parent)
		return nil
	}
	if strings.HasPrefix(base, WhiteoutPrefix+WhiteoutPrefix) {
		return nil // other AUFS metadata (.wh..wh.plnk and friends)
	}
	victim := strings.TrimPrefix(base, WhiteoutPrefix)
	if victim == "" {
		return Errorf(digest, entry, "whiteout names nothing")
	}
	if old := parent.kids[victim]; old != nil && old.layer < f.layers {
		f.drop(old)
		delete(parent.kids, victim)
	}
	return nil
}

func (f *FS) pruneLower(dir *node) {
	for k, child := range dir.kids {
		if child.layer < f.layers {
			f.drop(child)
			delete(dir.kids, k)
		} else if child.isDir() {
			f.pruneLower(child)
		}
	}
}

// drop accounts for a removed subtree. File content goes when its last
// hard link does, so overwriting links many times cannot drive the counts
// below what is really held.
func (f *FS) drop(n *node) {
	f.entries--
	if c := n.content; c != nil {
		if c.refs--; c.refs == 0 {
			if c.spill != "" {
				f.disk -= c.size
				_ = os.Remove(c.spill)
			} else {
				f.mem -= int64(len(c.data))
			}
			c.data = nil
		}
	}
	for _, k := range n.kids {
		f.drop(k)
	}
}

// checkSymlink refuses relative targets that climb above the image root.
// Absolute targets are resolved inside the root, as a container runtime does.
func checkSymlink(comps []string, target string) error {
	if target == "" {
		return errors.New("symbolic link with an empty target")
	}
	if strings.HasPrefix(target, "/") {
		return nil
	}
	depth := len(comps) - 1 // directory holding the link
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return fmt.Errorf("symbolic link to %q points outside the image root", target)
			}
		default:
			depth++
		}
	}
	return nil
}

// linkTarget finds the regular file a hard link names, by archive path.
func (f *FS) linkTarget(name, digest, entry string) (*node, error) {
	if strings.HasPrefix(name, "/") {
		return nil, Errorf(digest, entry, "hard link to absolute path %q points outside the image root", name)
	}
	comps := splitPath(name)
	for _, c := range comps {
		if c == ".." {
			return nil, Errorf(digest, entry, "hard link to %q points outside the image root", name)
		}
	}
	cur := f.root
	for i, c := range comps {
		if c == "." {
			continue
		}
		child := cur.kids[c]
		if child == nil {
			return nil, Errorf(digest, entry, "hard link to %q, which is not in the image", name)
		}
		if child.isSymlink() {
			return nil, Errorf(digest, entry, "hard link to %q goes through symbolic link %q", name, strings.Join(comps[:i+1], "/"))
		}
		cur = child
	}
	if cur.isDir() || cur.isSymlink() {
		return nil, Errorf(digest, entry, "hard link to %q, which is not a regular file", name)
	}
	return cur, nil
}

// storeData keeps small files in memory and spills big ones (or everything
// once the memory budget is spent) to the FS's temporary directory.
func (f *FS) storeData(n *node, r io.Reader, digest, entry string) error {
	size := n.size
	if size <= f.lim.spillFile && f.mem+size <= f.lim.spillTotal {
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return Truncated(digest, entry, err)
		}
		n.content = &content{data: data, size: size, refs: 1}
		f.mem += size
		return nil
	}
	if f.disk+size > f.lim.maxSpill {
		return Errorf(digest, entry, "files spilled to disk would pass the %s limit (%s; this entry is %s)", HumanSize(f.lim.maxSpill), TotalHint, HumanSize(size))
	}
	if f.tmpDir == "" {
		dir, err := os.MkdirTemp(f.lim.tempDir, "opm-fs-")
		if err != nil {
			return fmt.Errorf("spill large file: %w", err)
		}
		f.tmpDir = dir
	}
	tmp, err := os.CreateTemp(f.tmpDir, "file-")
	if err != nil {
		return fmt.Errorf("spill large file: %w", err)
	}
	_, err = io.CopyN(tmp, r, size)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp.Name())
		return Truncated(digest, entry, err)
	}
	n.content = &content{spill: tmp.Name(), size: size, refs: 1}
	f.disk += size
	return nil
}

func Truncated(digest, entry string, err error) error {
	var le *LayerError
	if errors.As(err, &le) {
		return err // the size cap tripped inside the stream
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return Errorf(digest, entry, "layer ends inside this entry (truncated)")
	}
	return Errorf(digest, entry, "read: %v", err)
}
