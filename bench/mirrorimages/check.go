package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// check reads the lines this command printed (role, reference by digest,
// bytes) from r and checks that every image is at the plain-HTTP registry
// target (REGISTRY/PREFIX) by its digest: at PREFIX/<source path>, or with
// last at PREFIX/<last component of the source path> (skopeo sync's
// layout). It returns how many it checked.
func check(ctx context.Context, r io.Reader, target string, last bool, jobs int) (int, error) {
	var refs []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 2 {
			continue
		}
		src := f[1]
		at := strings.IndexByte(src, '@')
		slash := strings.IndexByte(src, '/')
		if at < 0 || slash < 0 {
			return 0, fmt.Errorf("%q is not REGISTRY/PATH@DIGEST", src)
		}
		p := src[slash+1 : at]
		if last {
			p = path.Base(p)
		}
		refs = append(refs, strings.TrimSuffix(target, "/")+"/"+p+src[at:])
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		faults []string
	)
	work := make(chan string)
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ref := range work {
				if err := checkOne(ctx, ref); err != nil {
					mu.Lock()
					faults = append(faults, err.Error())
					mu.Unlock()
				}
			}
		}()
	}
	for _, ref := range refs {
		work <- ref
	}
	close(work)
	wg.Wait()
	if len(faults) > 0 {
		return len(refs), fmt.Errorf("%d of %d images missing or wrong at %s, the first: %s", len(faults), len(refs), target, faults[0])
	}
	return len(refs), nil
}

func checkOne(ctx context.Context, ref string) error {
	d, err := name.NewDigest(ref, name.Insecure)
	if err != nil {
		return err
	}
	desc, err := remote.Head(d, remote.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	if desc.Digest.String() != d.DigestStr() {
		return fmt.Errorf("%s: the registry serves %s", ref, desc.Digest)
	}
	return nil
}
