// Command serving-image writes opm's serving image (internal/servingimage)
// from binaries built beforehand; `make serving-image` builds them and runs it.
//
//	go run ./hack/serving-image -image REF -opm linux/amd64=PATH -busybox linux/amd64=PATH \
//	  [-opm linux/arm64=PATH -busybox linux/arm64=PATH] [-version V] [-revision R]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/servingimage"
)

// platformFiles is a repeatable os/arch=PATH flag.
type platformFiles map[image.Platform]string

func (m platformFiles) String() string { return fmt.Sprint(map[image.Platform]string(m)) }

func (m platformFiles) Set(s string) error {
	plat, file, ok := strings.Cut(s, "=")
	if !ok || file == "" {
		return fmt.Errorf("want os/arch=PATH, got %q", s)
	}
	p, err := image.ParsePlatform(plat)
	if err != nil {
		return err
	}
	m[p] = file
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serving-image:", err)
		os.Exit(1)
	}
}

func run() error {
	opts := servingimage.Options{Binaries: platformFiles{}, Busybox: platformFiles{}}
	var imgOpts image.Options
	dst := flag.String("image", "", "where to write the image: a registry reference or oci:DIR[:TAG]")
	flag.Var(platformFiles(opts.Binaries), "opm", "os/arch=PATH of a statically linked opm (repeat per platform)")
	flag.Var(platformFiles(opts.Busybox), "busybox", "os/arch=PATH of busybox-static's busybox (repeat per platform)")
	flag.StringVar(&opts.CACerts, "ca-certs", servingimage.DefaultCACerts, "PEM bundle of CA certificates to include")
	flag.StringVar(&opts.Version, "version", "", "org.opencontainers.image.version label")
	flag.StringVar(&opts.Revision, "revision", "", "org.opencontainers.image.revision label")
	flag.StringVar(&opts.Source, "source", servingimage.DefaultSource, "org.opencontainers.image.source label")
	flag.BoolVar(&imgOpts.UseHTTP, image.FlagUseHTTP, false, "push over plain HTTP")
	flag.BoolVar(&imgOpts.SkipTLSVerify, image.FlagSkipTLSVerify, false, "skip TLS certificate verification")
	flag.StringVar(&imgOpts.AuthFile, image.FlagAuthFile, "", "registry credentials file")
	flag.Parse()
	if *dst == "" || flag.NArg() > 0 {
		flag.Usage()
		return fmt.Errorf("-image is required and no arguments are taken")
	}
	ref, err := image.ParseReference(*dst)
	if err != nil {
		return err
	}
	if err := imgOpts.Validate(); err != nil {
		return err
	}
	c, err := image.NewClient(imgOpts)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	d, err := servingimage.Write(ctx, c, ref, opts)
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s\n", *dst, d)
	return nil
}
