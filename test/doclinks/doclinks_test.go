// Package doclinks checks the repository's Markdown: every relative link
// in README.md, CONTRIBUTING.md and docs/ points at a file or directory
// inside the repository that exists, and a #fragment into a Markdown file
// at one of its headings, so that a fresh clone has no broken links.
package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

const root = "../.."

// link matches [text](target) and ![alt](target), target without spaces,
// with an optional "title".
var link = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// refDef matches a reference definition: [id]: target
var refDef = regexp.MustCompile(`(?m)^\s{0,3}\[[^\]]+\]:\s+(\S+)`)

var fence = regexp.MustCompile("(?ms)^\\s*```.*?^\\s*```")

var inlineCode = regexp.MustCompile("`[^`\n]*`")

func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "CONTRIBUTING.md")}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// targets are the relative link targets of a Markdown text, fragments
// included ("#x" alone for the file itself); code blocks and code spans
// are not links.
func targets(md string) []string {
	md = fence.ReplaceAllString(md, "")
	md = inlineCode.ReplaceAllString(md, "")
	var out []string
	for _, re := range []*regexp.Regexp{link, refDef} {
		for _, m := range re.FindAllStringSubmatch(md, -1) {
			target := strings.Trim(m[1], "<>")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			out = append(out, target)
		}
	}
	return out
}

func TestRelativeLinksExist(t *testing.T) {
	t.Parallel()
	files := markdownFiles(t)
	if len(files) < 5 {
		t.Fatalf("found only %v: is the test running in test/doclinks?", files)
	}
	checked := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for _, target := range targets(string(data)) {
			checked++
			file, frag, _ := strings.Cut(target, "#")
			p := f
			if file != "" {
				p = filepath.Join(filepath.Dir(f), filepath.FromSlash(file))
			}
			if r, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(r, "..") {
				t.Errorf("%s: link to %s points outside the repository (a fresh clone lacks it)", rel, target)
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s: link to %s: no such file (%s)", rel, target, p)
				continue
			}
			if frag != "" && strings.HasSuffix(p, ".md") {
				if !anchors(t, p)[frag] {
					t.Errorf("%s: link to %s: no heading with anchor #%s in %s", rel, target, frag, filepath.Base(p))
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the pattern is broken")
	}
}

var heading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*#*\s*$`)

// anchors are the GitHub anchors of a Markdown file's headings: lower
// case, punctuation other than - and _ dropped, spaces made hyphens, a
// repeated anchor numbered (-1, -2, ...). Explicit <a name> anchors count too.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md := fence.ReplaceAllString(string(data), "")
	out := map[string]bool{}
	seen := map[string]int{}
	for _, m := range heading.FindAllStringSubmatch(md, -1) {
		a := slug(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	for _, m := range namedAnchor.FindAllStringSubmatch(md, -1) {
		out[m[1]] = true
	}
	return out
}

var namedAnchor = regexp.MustCompile(`<a\s+(?:name|id)="([^"]+)"`)

func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestTargets(t *testing.T) {
	t.Parallel()
	md := "See [a](docs/a.md#x), ![i](img.png \"t\"), [web](https://x.org/y.md), [frag](#here).\n" +
		"```sh\n[not](a-link.md)\n```\n`[code](span.md)` and\n[ref]: ../other.md\n"
	got := targets(md)
	want := []string{"docs/a.md#x", "img.png", "#here", "../other.md"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("targets = %v, want %v", got, want)
	}
}

func TestSlug(t *testing.T) {
	t.Parallel()
	for h, want := range map[string]string{
		"The shared corpus (`../shared`)":                 "the-shared-corpus-shared",
		"Every upstream v1.73.0 command and flag":         "every-upstream-v1730-command-and-flag",
		"Serving (opm registry serve, internal/registry)": "serving-opm-registry-serve-internalregistry",
		"Upstream's command paths":                        "upstreams-command-paths",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
