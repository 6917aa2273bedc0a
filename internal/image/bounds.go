package image

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/opmkit/opm/internal/bytesize"
)

// What a registry may make one pull do, whatever it sends. Blobs are not
// bounded here: their size is declared by the manifest that names them,
// checked against --max-layer-size before they are fetched, and a blob
// that runs past its declared size fails as it arrives.
const (
	// maxRedirects is how many redirects one request follows (net/http's
	// own default, which go-containerregistry lifts for same-host ones).
	maxRedirects = 10
	// maxTagPageSize bounds one page of a tag list; maxTagPages the pages.
	maxTagPageSize = 16 << 20
	maxTagPages    = 10000
	// maxOtherBody bounds the bodies that are neither blobs, manifests nor
	// tag lists: the /v2/ ping, upload answers, tokens, error documents.
	maxOtherBody = 1 << 20
)

// boundGuard refuses a request redirected more than maxRedirects times
// and caps the bodies of everything but blobs: a manifest at
// maxManifestSize (refused on its Content-Length before any of it is
// read, else once one byte too many has arrived), a tag list page at
// maxTagPageSize.
type boundGuard struct {
	host string
	next http.RoundTripper
}

func (g boundGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	// A redirected request carries the answer that redirected it, whose
	// request carries the one before: the chain is the redirect count.
	first, hops := req, 0
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
		hops++
	}
	if hops > maxRedirects {
		return nil, &errRedirects{host: g.host, path: first.URL.Path}
	}
	resp, err := g.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.Body == nil {
		return resp, err
	}
	what, limit := bodyKind(first.URL.Path)
	if limit == 0 {
		return resp, nil
	}
	if resp.ContentLength > limit && resp.StatusCode/100 == 2 {
		_ = resp.Body.Close()
		return nil, &errTooLarge{host: g.host, what: what, limit: limit, announced: resp.ContentLength}
	}
	resp.Body = &cappedBody{rc: resp.Body, limit: limit, err: &errTooLarge{host: g.host, what: what, limit: limit}}
	return resp, nil
}

// bodyKind names what a GET of path fetches and the most of it read; 0
// for blobs, whose size their manifest declares.
func bodyKind(path string) (string, int64) {
	switch {
	case strings.Contains(path, "/blobs/"):
		return "blob", 0
	case strings.HasSuffix(path, "/tags/list"):
		return "tag list page", maxTagPageSize
	case strings.Contains(path, "/manifests/"):
		return "manifest", maxManifestSize
	case strings.Contains(path, "/referrers/"):
		return "referrers index", maxManifestSize
	}
	return "answer", maxOtherBody
}

// cappedBody fails once more than limit bytes arrived.
type cappedBody struct {
	rc    io.ReadCloser
	limit int64
	n     int64
	err   error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		// At the limit: only the end of the body is acceptable.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, b.err
		}
		return 0, err
	}
	if rest := b.limit - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// errTooLarge is a body over its limit; retrying cannot help.
type errTooLarge struct {
	host      string
	what      string
	limit     int64
	announced int64 // the Content-Length, when that was over
}

func (e *errTooLarge) Error() string {
	if e.announced > 0 {
		return fmt.Sprintf("registry %s announced a %s of %d bytes, over the %s opm reads", e.host, e.what, e.announced, bytesize.Format(e.limit))
	}
	return fmt.Sprintf("registry %s sent a %s larger than the %s opm reads", e.host, e.what, bytesize.Format(e.limit))
}

// errRedirects is a request redirected too often: a loop, or a registry
// that never answers.
type errRedirects struct {
	host string
	path string
}

func (e *errRedirects) Error() string {
	return fmt.Sprintf("registry %s redirected the request for %s more than %d times (a redirect loop)", e.host, e.path, maxRedirects)
}

// listTags lists the tags of repo that keep says to keep, page by page,
// at most maxTagPages pages (a registry whose Link headers never end
// would otherwise be followed forever) and each page at most
// maxTagPageSize (boundGuard). Only the kept tags are held.
func listTags(ctx context.Context, p *remote.Puller, repo name.Repository, keep func(string) bool) ([]string, error) {
	l, err := p.Lister(ctx, repo)
	if err != nil {
		return nil, err
	}
	var tags []string
	seen := map[string]bool{}
	for pages := 0; l.HasNext(); pages++ {
		if pages == maxTagPages {
			return nil, fmt.Errorf("registry %s lists the tags of %s in more than %d pages (a Link header loop?)", repo.RegistryStr(), repo.RepositoryStr(), maxTagPages)
		}
		page, err := l.Next(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tags {
			if keep(t) && !seen[t] {
				seen[t] = true
				tags = append(tags, t)
			}
		}
	}
	return tags, nil
}
