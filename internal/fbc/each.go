package fbc

import (
	"errors"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strings"
)

// LoadEach reads the catalog under fsys part by part and hands each part to
// fn, in order: the files at the root together, then each top-level
// directory (where catalogs keep one package each, as opm migrate writes
// them). Parts are parsed concurrently a few ahead of fn, so memory follows
// the largest parts, not the catalog. Positions and errors name files from
// the root, as Load's do. A root .indexignore may name paths in any part,
// so then the catalog is read whole, as one part. Errors are collected as
// Load collects them; fn's error stops the walk.
func LoadEach(fsys fs.FS, fn func(*Catalog) error) error {
	return LoadEachWith(fsys, LoadOptions{}, fn)
}

// LoadEachWith is LoadEach with options (the limits hold for every part).
func LoadEachWith(fsys fs.FS, opts LoadOptions, fn func(*Catalog) error) error {
	mem, blobs := newBudget(opts.Limits.file()), newBlobCount(opts.Limits)
	if _, err := fs.Stat(fsys, IgnoreFile); err == nil {
		c, err := LoadWith(fsys, opts)
		if err != nil {
			return err
		}
		return fn(c)
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return &LoadError{File: ".", Msg: err.Error()}
	}
	type part struct {
		dir   string   // a top-level directory, or "" for the root's files
		files []string // the root's catalog files
	}
	parts := []part{{}}
	var ignored []string
	for _, e := range entries {
		switch {
		case e.IsDir():
			parts = append(parts, part{dir: e.Name()})
		case e.Name() == IgnoreFile:
		default:
			switch strings.ToLower(path.Ext(e.Name())) {
			case ".json", ".yaml", ".yml":
				parts[0].files = append(parts[0].files, e.Name())
			default:
				ignored = append(ignored, e.Name())
			}
		}
	}
	sort.Strings(parts[0].files)

	load := func(p part) (*Catalog, error) {
		if p.dir == "" {
			c := &Catalog{Ignored: ignored}
			var errs []error
			for _, f := range p.files {
				if blobs.full() {
					break // reported where it was passed
				}
				data, held, err := readFile(fsys, f, opts.Limits, mem)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				errs = append(errs, c.loadFileWithin(f, data, opts, blobs)...)
				mem.release(held)
			}
			return c, errors.Join(errs...)
		}
		sub, err := fs.Sub(fsys, p.dir)
		if err != nil {
			return nil, &LoadError{File: p.dir, Msg: err.Error()}
		}
		// One budget and one count of blobs for the whole catalog: the
		// parts read ahead share them.
		c, err := loadWith(sub, opts, mem, blobs)
		c.prefix(p.dir)
		for _, e := range LoadErrors(err) {
			var le *LoadError
			if errors.As(e, &le) {
				le.File = path.Join(p.dir, le.File)
			}
		}
		return c, err
	}

	type result struct {
		c   *Catalog
		err error
	}
	ahead := runtime.GOMAXPROCS(0)
	results := make([]chan result, len(parts))
	for i := range results {
		results[i] = make(chan result, 1)
	}
	sem := make(chan struct{}, ahead)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i, p := range parts {
			select {
			case sem <- struct{}{}:
			case <-stop:
				return
			}
			go func() {
				c, err := load(p)
				results[i] <- result{c, err}
			}()
		}
	}()
	var errs []error
	for i := range parts {
		r := <-results[i]
		<-sem
		if r.err != nil {
			errs = append(errs, r.err)
		}
		if len(errs) > 0 {
			// A caller that needs the whole catalog treats any error as
			// fatal: stop handing out parts, but collect every problem.
			continue
		}
		if err := fn(r.c); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

// prefix makes the positions of c's blobs relative to dir's parent.
func (c *Catalog) prefix(dir string) {
	for i := range c.Packages {
		c.Packages[i].Pos.File = path.Join(dir, c.Packages[i].Pos.File)
	}
	for i := range c.Channels {
		c.Channels[i].Pos.File = path.Join(dir, c.Channels[i].Pos.File)
	}
	for i := range c.Bundles {
		c.Bundles[i].Pos.File = path.Join(dir, c.Bundles[i].Pos.File)
	}
	for i := range c.Others {
		c.Others[i].Pos.File = path.Join(dir, c.Others[i].Pos.File)
	}
	for i := range c.Ignored {
		c.Ignored[i] = path.Join(dir, c.Ignored[i])
	}
}
