package index

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/opmkit/opm/internal/atomicfile"
)

// A verified log records databases that opm checked with quick_check and has
// since changed only through sqlite, by the identity of their file as opm
// left it. Writing one package at a time into a growing database would
// otherwise re-check the whole file on every call (about 0.8 s per GiB),
// which is most of the cost of an add into a big database. A file changed
// by anything else (another tool, a copy, a restore) has another identity
// and is checked again.

// maxVerified bounds the log: the most recently verified databases are kept.
const maxVerified = 64

type verifiedEntry struct {
	Identity string    `json:"identity"`
	At       time.Time `json:"at"`
}

// fileIdentity is what changes whenever a database file changes: device,
// inode, size, modification time, status-change time (which no one can set
// back: a file damaged in place with its size, mtime and header restored
// still has a new ctime), and sqlite's own change counter and
// version-valid-for number from the file header.
func fileIdentity(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	hdr := make([]byte, 100)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return "", err
	}
	var dev, ino uint64
	var ctime int64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		dev, ino = uint64(sys.Dev), sys.Ino
		ctime = sys.Ctim.Nano()
	}
	return fmt.Sprintf("%d:%d:%d:%d:%d:%s:%s", dev, ino, st.Size(), st.ModTime().UnixNano(), ctime,
		hex.EncodeToString(hdr[24:28]), hex.EncodeToString(hdr[92:96])), nil
}

func readVerified(log string) map[string]verifiedEntry {
	m := map[string]verifiedEntry{}
	data, err := os.ReadFile(log)
	if err != nil {
		return m
	}
	// A damaged log only costs a check.
	_ = json.Unmarshal(data, &m)
	return m
}

// isVerified reports whether path is as opm left it after a check.
func isVerified(log, path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	e, ok := readVerified(log)[abs]
	if !ok {
		return false
	}
	id, err := fileIdentity(path)
	return err == nil && id == e.Identity
}

// setVerified records path's current identity in log (verified true) or
// drops it (false). Failures are ignored: the log only saves work.
func setVerified(log, path string, verified bool) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return
	}
	m := readVerified(log)
	if verified {
		id, err := fileIdentity(path)
		if err != nil {
			return
		}
		m[abs] = verifiedEntry{Identity: id, At: time.Now().UTC()}
	} else {
		if _, ok := m[abs]; !ok {
			return
		}
		delete(m, abs)
	}
	// Entries of files that are gone (temporary databases) only fill the
	// log.
	for k := range m {
		if _, err := os.Lstat(k); errors.Is(err, fs.ErrNotExist) {
			delete(m, k)
		}
	}
	if len(m) > maxVerified {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return m[keys[i]].At.After(m[keys[j]].At) })
		for _, k := range keys[maxVerified:] {
			delete(m, k)
		}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(log), 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return
	}
	_ = atomicfile.WriteFile(log, data)
}

// VerifiedLogIn is where commands keep the verified log, given the
// environment: $XDG_CACHE_HOME/opm, else ~/.cache/opm ("" when neither is
// known, which turns the log off).
func VerifiedLogIn(lookupEnv func(string) (string, bool)) string {
	dir, _ := lookupEnv("XDG_CACHE_HOME")
	if !filepath.IsAbs(dir) {
		home, _ := lookupEnv("HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "opm", "verified-databases.json")
}

// corrupted returns err; when it says the file is damaged, the file is no
// longer recorded as verified, now or when it is closed.
func (d *DB) corrupted(err error) error {
	if errors.Is(err, ErrCorrupt) && d.verifiedLog != "" {
		setVerified(d.verifiedLog, d.path, false)
		d.verifiedLog = ""
	}
	return err
}
