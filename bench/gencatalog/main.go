// Command gencatalog writes a synthetic operator catalog for
// bench/validate-scale.sh: copies of the shared corpus's bundles, each copy
// under a package of its own, until it holds the number of bundles asked
// for.
//
//	go run ./bench/gencatalog -corpus ../shared/corpus -out /tmp/cat -n 10000
//
// Copy k of bundle <package>/<version> becomes <package>-c<k>/<version>: its
// package annotation is rewritten to <package>-c<k> so that copies do not
// collide in the package rules, and its CSV gets version <version>-c<k>
// (name <csv-name>-c<k>) so that names and versions stay unique across the
// catalog, as in a real one (a prerelease version sorts below its skipRange
// bound, so a few more csv-skip-range warnings appear than in the corpus). Every other file is hard-linked (copied when the
// output is on another file system). It prints the bundle directories, one a
// line, to OUT/bundles.txt: copy 0 of every bundle, then copy 1, and so on,
// each copy in package order. With -same-package, copies stay in their
// corpus package (<package>/<version>-c<k>), so that packages hold tens or
// hundreds of bundles, as in a real catalog, instead of the corpus's dozen.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
)

func main() {
	corpus := flag.String("corpus", "../shared/corpus", "the shared corpus (real/PKG/VER and edge/CASE/PKG/VER bundles)")
	out := flag.String("out", "", "directory to write the catalog to (must not exist)")
	n := flag.Int("n", 1000, "number of bundles to write")
	same := flag.Bool("same-package", false, "keep each copy in its corpus package (as <package>/<version>-c<k>), so packages grow with the copies as a real catalog's do")
	flag.Parse()
	if *out == "" || *n <= 0 {
		fmt.Fprintln(os.Stderr, "usage: gencatalog -corpus DIR -out DIR -n BUNDLES")
		os.Exit(2)
	}
	if err := run(*corpus, *out, *n, *same); err != nil {
		fmt.Fprintln(os.Stderr, "gencatalog:", err)
		os.Exit(1)
	}
}

// source is one corpus bundle: its directory and its package/version names.
type source struct{ dir, pkg, ver string }

func sources(corpus string) ([]source, error) {
	var out []source
	for _, pattern := range []string{"real/*/*", "edge/*/*/*"} {
		dirs, err := filepath.Glob(filepath.Join(corpus, pattern))
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				continue
			}
			out = append(out, source{dir: d, pkg: filepath.Base(filepath.Dir(d)), ver: filepath.Base(d)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no bundles under %s (want real/PKG/VER and edge/CASE/PKG/VER directories)", corpus)
	}
	// Package order, as a catalog repository lists them.
	sort.SliceStable(out, func(i, j int) bool { return out[i].pkg < out[j].pkg })
	return out, nil
}

func run(corpus, out string, n int, same bool) error {
	srcs, err := sources(corpus)
	if err != nil {
		return err
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	var list []string
	for k := 0; len(list) < n; k++ {
		for _, s := range srcs {
			if len(list) == n {
				break
			}
			rel := filepath.Join(fmt.Sprintf("%s-c%d", s.pkg, k), s.ver)
			if same {
				rel = filepath.Join(s.pkg, fmt.Sprintf("%s-c%d", s.ver, k))
			}
			if err := copyBundle(s, filepath.Join(out, rel), k, same); err != nil {
				return fmt.Errorf("copy %s: %w", s.dir, err)
			}
			list = append(list, rel)
		}
	}
	// Copy by copy, so that the first N bundles have the corpus's mix of
	// bundles whatever N (a glob's alphabetical order would not: its first
	// thousand are every copy of the first few packages).
	return os.WriteFile(filepath.Join(out, "bundles.txt"), []byte(strings.Join(list, "\n")+"\n"), 0o644)
}

var (
	packageLine = regexp.MustCompile(`(?m)^(\s*operators\.operatorframework\.io\.bundle\.package\.v1:\s*)(\S+)(\s*)$`)
	// The CSV's own name and version: the first metadata.name and the
	// spec.version at two-space indent, which is how every corpus CSV is
	// written.
	csvName    = regexp.MustCompile(`(?m)^(  name:\s*['"]?)([^'"\s]+)`)
	csvVersion = regexp.MustCompile(`(?m)^(  version:\s*['"]?)([^'"\s]+)`)
)

func copyBundle(s source, dst string, k int, samePackage bool) error {
	suffix := fmt.Sprintf("-c%d", k)
	return filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Name() == "annotations.yaml" && !samePackage:
			return rewrite(p, target, func(b []byte) []byte {
				return packageLine.ReplaceAll(b, []byte("${1}${2}"+suffix+"${3}"))
			})
		case strings.HasSuffix(d.Name(), ".clusterserviceversion.yaml"):
			return rewrite(p, target, func(b []byte) []byte {
				b = replaceFirst(csvName, b, suffix)
				return replaceFirst(csvVersion, b, suffix)
			})
		}
		return link(p, target)
	})
}

// replaceFirst appends suffix to the value of re's first match.
func replaceFirst(re *regexp.Regexp, b []byte, suffix string) []byte {
	m := re.FindSubmatchIndex(b)
	if m == nil {
		return b
	}
	out := append([]byte{}, b[:m[5]]...)
	out = append(out, suffix...)
	return append(out, b[m[5]:]...)
}

func rewrite(src, dst string, edit func([]byte) []byte) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, edit(b), 0o644)
}

func link(src, dst string) error {
	err := os.Link(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	if _, err := io.Copy(w, in); err != nil {
		out.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
