// Package mermaidform reads a mermaid upgrade graph, as opm's or upstream
// opm's render-graph writes it, into a form that says what it draws and
// not how: node ids replaced by the package, channel and name they stand
// for, and a skipRange drawn as one edge per covered bundle (upstream) or
// as one range node (opm) both read as one edge into the entry. Tests
// compare opm's drawings with upstream's through it.
package mermaidform

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var (
	subgraphRE = regexp.MustCompile(`^subgraph (?:(\S+?)\["(.*)"\]|"(.*)")$`)
	nodeRE     = regexp.MustCompile(`^(\S+?)\["(.*)"\]$`)
	edgeRE     = regexp.MustCompile(`^(\S+?)(?:\["(.*?)"\]|\{\{"(.*?)"\}\})-- (.+?) --> (\S+?)\["(.*)"\]$`)
	styleRE    = regexp.MustCompile(`^style (\S+) (.*)$`)
	classRE    = regexp.MustCompile(`^class (\S+) (\S+)$`)
	linkRE     = regexp.MustCompile(`^linkStyle (\S+) (.*)$`)
)

// Form reads text into its form, one statement a line.
func Form(text string) (string, error) {
	var out []string
	var path []string
	ids := map[string]string{}
	subgraphs := map[string]string{}
	// links maps each source edge's number (what linkStyle counts) to its
	// line of the form.
	src := 0
	links := map[int]int{}
	lastRange := ""
	var tail []string
	for n, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		where := func() string { return strings.Join(path, "/") }
		switch {
		case line == "" || strings.HasPrefix(line, "%%") || strings.HasPrefix(line, "classDef ") || line == "graph LR":
		case line == "end":
			if len(path) == 0 {
				return "", fmt.Errorf("line %d: end without subgraph", n+1)
			}
			path = path[:len(path)-1]
			out = append(out, "end")
			lastRange = ""
		case subgraphRE.MatchString(line):
			m := subgraphRE.FindStringSubmatch(line)
			id, label := m[1], unescape(m[2])
			if id == "" {
				id, label = m[3], unescape(m[3])
			}
			path = append(path, label)
			subgraphs[id] = where()
			out = append(out, "subgraph "+where())
		case edgeRE.MatchString(line):
			m := edgeRE.FindStringSubmatch(line)
			to := where() + "/" + unescape(m[6])
			ids[m[5]] = to
			kind := unescape(m[4])
			if m[3] == "" {
				ids[m[1]] = where() + "/" + unescape(m[2])
			}
			if strings.HasPrefix(kind, `"skipRange(`) {
				// Upstream's edges of one skipRange come one after the
				// other; they are one edge here.
				key := kind + " --> " + to
				if key == lastRange {
					links[src] = len(out) - 1
					src++
					continue
				}
				lastRange = key
				links[src] = len(out)
				src++
				out = append(out, "edge "+key)
				continue
			}
			lastRange = ""
			links[src] = len(out)
			src++
			out = append(out, fmt.Sprintf("edge %s -- %s --> %s", ids[m[1]], kind, to))
		case nodeRE.MatchString(line):
			m := nodeRE.FindStringSubmatch(line)
			ids[m[1]] = where() + "/" + unescape(m[2])
			out = append(out, "node "+ids[m[1]])
			lastRange = ""
		default:
			tail = append(tail, line)
		}
	}
	var rest []string
	for _, line := range tail {
		switch {
		case styleRE.MatchString(line):
			m := styleRE.FindStringSubmatch(line)
			rest = append(rest, "style "+subgraphs[m[1]]+" "+m[2])
		case classRE.MatchString(line):
			m := classRE.FindStringSubmatch(line)
			var names []string
			for _, id := range strings.Split(m[1], ",") {
				names = append(names, ids[id])
			}
			sort.Strings(names)
			rest = append(rest, "class "+m[2]+" "+strings.Join(names, ","))
		case linkRE.MatchString(line):
			m := linkRE.FindStringSubmatch(line)
			seen := map[string]bool{}
			var edges []string
			for _, s := range strings.Split(m[1], ",") {
				i, err := strconv.Atoi(s)
				if err != nil {
					return "", fmt.Errorf("linkStyle %q: %w", s, err)
				}
				if k, ok := links[i]; ok && !seen[out[k]] {
					seen[out[k]] = true
					edges = append(edges, out[k])
				}
			}
			sort.Strings(edges)
			rest = append(rest, "linkStyle "+m[2]+" "+strings.Join(edges, " | "))
		default:
			return "", fmt.Errorf("statement not understood: %q", line)
		}
	}
	return strings.Join(append(out, rest...), "\n") + "\n", nil
}

// unescape reads a label as either writer escapes it: opm's entity codes,
// upstream's Go quoting.
func unescape(s string) string {
	if strings.Contains(s, `\`) {
		if u, err := strconv.Unquote(`"` + s + `"`); err == nil {
			s = u
		}
	}
	return strings.NewReplacer("#quot;", `"`, "#lt;", "<", "#gt;", ">", "#amp;", "&", "#96;", "`", "#35;", "#").Replace(s)
}
