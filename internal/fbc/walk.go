package fbc

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/opmkit/opm/internal/yamldoc"
)

// WalkBlobs calls fn with every blob of the catalog under fsys as JSON, in
// catalog order: files in lexical walk order (as Load reads them, skipping
// .indexignore'd files and files that are neither JSON nor YAML), blobs in
// file order. Only one file is held in memory at a time, so a caller that
// streams the blobs out (the HTTP server's JSON-lines file) needs memory for
// the largest file, not the catalog. The first error (reading, parsing or
// from fn) stops the walk; parse errors are *LoadError. The default Limits
// hold.
func WalkBlobs(fsys fs.FS, fn func(file string, line int, raw json.RawMessage) error) error {
	return WalkBlobsWith(fsys, LoadOptions{}, fn)
}

// WalkBlobsWith is WalkBlobs within opts' limits.
func WalkBlobsWith(fsys fs.FS, opts LoadOptions, fn func(file string, line int, raw json.RawMessage) error) error {
	ign := &ignorer{}
	var files []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return &LoadError{File: p, Msg: err.Error()}
		}
		if d.IsDir() {
			if p != "." && ign.match(p, true) {
				return fs.SkipDir
			}
			data, err := readIgnoreFile(fsys, p)
			if err != nil {
				return &LoadError{File: path.Join(p, IgnoreFile), Msg: err.Error()}
			}
			if data != nil {
				ign.add(p, data)
			}
			return nil
		}
		if d.Name() == IgnoreFile || ign.match(p, false) {
			return nil
		}
		switch strings.ToLower(path.Ext(p)) {
		case ".json", ".yaml", ".yml":
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	lim := opts.Limits
	mem, blobs := newBudget(lim.file()), newBlobCount(lim)
	for _, name := range files {
		data, held, err := readFile(fsys, name, lim, mem)
		if err != nil {
			return err
		}
		err = walkFile(name, data, lim, blobs, fn)
		mem.release(held)
		if err != nil {
			return err
		}
	}
	return nil
}

func walkFile(name string, data []byte, lim Limits, blobs *blobCount, fn func(file string, line int, raw json.RawMessage) error) error {
	if strings.EqualFold(path.Ext(name), ".json") {
		var fnErr error
		err := splitJSON(name, data, lim, blobs, func(line int, _ int64, raw []byte) {
			if fnErr == nil {
				fnErr = fn(name, line, append(json.RawMessage(nil), raw...)) // raw is a slice of the file
			}
		})
		return errors.Join(fnErr, err)
	}
	if err := yamlDocsFit(name, data, lim, blobs); err != nil {
		return err
	}
	docs, err := yamldoc.Decode(name, data)
	if err != nil {
		var se *yamldoc.SyntaxError
		if errors.As(err, &se) {
			return &LoadError{File: name, Line: se.Line, Msg: "YAML syntax error: " + se.Msg}
		}
		return &LoadError{File: name, Msg: err.Error()}
	}
	for _, d := range docs {
		raw, err := yamlBlob(name, d, lim)
		if err != nil {
			return err
		}
		if err := fn(name, d.Line, raw); err != nil {
			return err
		}
	}
	return nil
}
