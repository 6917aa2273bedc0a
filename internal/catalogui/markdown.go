package catalogui

import (
	"html"
	"regexp"
	"strings"
)

// Markdown renders the subset of Markdown operator descriptions use
// (headings, paragraphs, lists, fenced and indented code, emphasis, inline
// code, links) as HTML. Everything from the text is escaped: raw HTML in
// a description is shown as text, and links keep only http(s) and mailto
// targets, so a catalog cannot put markup or scripts into the page.
func Markdown(src string) string {
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	var b strings.Builder
	var para []string
	list := "" // "ul" or "ol" while in a list
	flush := func() {
		if len(para) > 0 {
			b.WriteString("<p>" + inline(strings.Join(para, " ")) + "</p>\n")
			para = nil
		}
	}
	closeList := func() {
		if list != "" {
			b.WriteString("</" + list + ">\n")
			list = ""
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "```") || strings.HasPrefix(trim, "~~~"):
			flush()
			closeList()
			fence := trim[:3]
			var code []string
			for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
				code = append(code, lines[i])
			}
			b.WriteString("<pre><code>" + html.EscapeString(strings.Join(code, "\n")) + "</code></pre>\n")
		case trim == "":
			flush()
			closeList()
		case headingRE.MatchString(trim):
			flush()
			closeList()
			m := headingRE.FindStringSubmatch(trim)
			n := string(rune('0' + min(len(m[1])+2, 6))) // h1 in a description is an h3 on the page
			b.WriteString("<h" + n + ">" + inline(strings.TrimRight(m[2], " #")) + "</h" + n + ">\n")
		case bulletRE.MatchString(line) || orderedRE.MatchString(line):
			flush()
			kind, text := "ul", ""
			if m := bulletRE.FindStringSubmatch(line); m != nil {
				text = m[1]
			} else {
				kind, text = "ol", orderedRE.FindStringSubmatch(line)[1]
			}
			if list != kind {
				closeList()
				b.WriteString("<" + kind + ">\n")
				list = kind
			}
			b.WriteString("<li>" + inline(text) + "</li>\n")
		case strings.HasPrefix(line, "    ") && len(para) == 0 && list == "":
			var code []string
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == ""); i++ {
				code = append(code, strings.TrimPrefix(lines[i], "    "))
			}
			i--
			b.WriteString("<pre><code>" + html.EscapeString(strings.TrimRight(strings.Join(code, "\n"), "\n")) + "</code></pre>\n")
		default:
			if list != "" && strings.HasPrefix(line, " ") {
				// A list item's continuation line.
				b.WriteString("<li>" + inline(trim) + "</li>\n")
				continue
			}
			closeList()
			para = append(para, trim)
		}
	}
	flush()
	closeList()
	return b.String()
}

var (
	headingRE = regexp.MustCompile(`^(#{1,6})\s+(.*)$`)
	bulletRE  = regexp.MustCompile(`^\s{0,3}[-*+]\s+(.*)$`)
	orderedRE = regexp.MustCompile(`^\s{0,3}\d{1,9}[.)]\s+(.*)$`)
	codeRE    = regexp.MustCompile("`([^`]+)`")
	linkRE    = regexp.MustCompile(`\[([^\]]+)\]\(((?:[^()\s]|\([^()\s]*\))+)\)`)
	boldRE    = regexp.MustCompile(`\*\*([^*]+)\*\*|__([^_]+)__`)
	italicRE  = regexp.MustCompile(`\*([^*]+)\*`)
)

// inline renders a line's spans. The text is escaped first; the patterns
// then match escaped text, so nothing they insert comes from the input
// unescaped.
func inline(s string) string {
	// Code spans are set aside so that their contents stay literal.
	var codes []string
	s = codeRE.ReplaceAllStringFunc(s, func(m string) string {
		codes = append(codes, html.EscapeString(m[1:len(m)-1]))
		return "\x00" + string(rune('a'+len(codes)-1)) + "\x00"
	})
	s = html.EscapeString(s)
	s = linkRE.ReplaceAllStringFunc(s, func(m string) string {
		p := linkRE.FindStringSubmatch(m)
		target := html.UnescapeString(p[2])
		if !strings.HasPrefix(target, "https://") && !strings.HasPrefix(target, "http://") && !strings.HasPrefix(target, "mailto:") {
			return p[1]
		}
		return `<a href="` + html.EscapeString(target) + `" rel="noopener noreferrer">` + p[1] + `</a>`
	})
	s = boldRE.ReplaceAllStringFunc(s, func(m string) string {
		return "<strong>" + m[2:len(m)-2] + "</strong>"
	})
	s = italicRE.ReplaceAllString(s, "<em>$1</em>")
	for i, c := range codes {
		s = strings.Replace(s, "\x00"+string(rune('a'+i))+"\x00", "<code>"+c+"</code>", 1)
	}
	return s
}
