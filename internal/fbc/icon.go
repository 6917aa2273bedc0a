package fbc

import (
	"bytes"
	"fmt"
	"strings"
)

// IconMediaType tells the media type of an icon from its content, as
// upstream's `opm init` does: PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, AVIF,
// HEIF and SVG (an XML document whose root is <svg>), with upstream's media
// types. Anything else is an error saying what was found.
func IconMediaType(data []byte) (string, error) {
	b := data
	switch {
	case len(b) == 0:
		return "", fmt.Errorf("the icon file is empty")
	case len(b) > 2 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return "image/jpeg", nil
	case bytes.HasPrefix(b, []byte("\x89PNG")):
		return "image/png", nil
	case bytes.HasPrefix(b, []byte("GIF")):
		return "image/gif", nil
	case len(b) > 11 && string(b[8:12]) == "WEBP":
		return "image/webp", nil
	case len(b) > 10 && (bytes.HasPrefix(b, []byte("II*\x00")) || bytes.HasPrefix(b, []byte("MM\x00*"))) &&
		(b[8] != 'C' || b[9] != 'R' || b[10] != 0x02): // not Canon's CR2, which starts alike
		return "image/tiff", nil
	case bytes.HasPrefix(b, []byte("BM")):
		return "image/bmp", nil
	case bytes.HasPrefix(b, []byte{0, 0, 1, 0}):
		return "image/vnd.microsoft.icon", nil
	}
	if major, compat, ok := ftyp(b); ok {
		has := func(brand string) bool {
			if major == brand {
				return true
			}
			if major != "mif1" && major != "msf1" {
				return false
			}
			for _, c := range compat {
				if c == brand {
					return true
				}
			}
			return false
		}
		switch {
		case has("heic"):
			return "image/heif", nil
		case has("avif"):
			return "image/avif", nil
		}
	}
	if isSVG(b) {
		return "image/svg+xml", nil
	}
	return "", fmt.Errorf("not an image opm recognises (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, AVIF, HEIF or SVG); it starts with %q", head(b, 16))
}

// ftyp reads the brands of an ISO base media file (the box AVIF and HEIF
// start with).
func ftyp(b []byte) (major string, compat []string, ok bool) {
	if len(b) < 16 || string(b[4:8]) != "ftyp" {
		return "", nil, false
	}
	size := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
	if size < 16 || size > len(b) {
		return "", nil, false
	}
	major = string(b[8:12])
	for i := 16; i+4 <= size; i += 4 {
		compat = append(compat, string(b[i:i+4]))
	}
	return major, compat, true
}

// isSVG reports whether b is an XML document whose root is <svg>: after
// an optional byte-order mark, XML declaration, comments and doctype.
func isSVG(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	for {
		b = bytes.TrimLeft(b, " \t\r\n")
		switch {
		case bytes.HasPrefix(b, []byte("<?")):
			i := bytes.Index(b, []byte("?>"))
			if i < 0 {
				return false
			}
			b = b[i+2:]
		case bytes.HasPrefix(b, []byte("<!--")):
			i := bytes.Index(b, []byte("-->"))
			if i < 0 {
				return false
			}
			b = b[i+3:]
		case bytes.HasPrefix(b, []byte("<!")):
			i := bytes.IndexByte(b, '>')
			if i < 0 {
				return false
			}
			b = b[i+1:]
		default:
			return bytes.HasPrefix(b, []byte("<svg")) && len(b) > 4 && strings.IndexByte(" \t\r\n>/", b[4]) >= 0
		}
	}
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
