package clusterstate

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Read is the state that flags give: Subscriptions spelled
// PKG[/CHANNEL][@STARTING-CSV], files of Subscriptions, and installed
// operators spelled PKG=CSV or named by a file of CSVs (a value that is
// an existing file is a file). Errors name the flag and, for a file, the
// file, line and field.
func Read(subscriptions, subscriptionFiles, installed []string) (State, error) {
	var st State
	for _, s := range subscriptions {
		sub, err := ParseSubscription(s)
		if err != nil {
			return st, fmt.Errorf("--subscription: %w", err)
		}
		st.Subscriptions = append(st.Subscriptions, Subscription{Subscription: sub, From: "--subscription " + s})
	}
	for _, file := range subscriptionFiles {
		data, err := os.ReadFile(file)
		if err != nil {
			return st, fmt.Errorf("--subscriptions: %w", err)
		}
		subs, err := ReadSubscriptions(file, data)
		if err != nil {
			return st, fmt.Errorf("--subscriptions: %w", err)
		}
		st.Subscriptions = append(st.Subscriptions, subs...)
	}
	for _, v := range installed {
		data, err := os.ReadFile(v)
		if errors.Is(err, os.ErrNotExist) && strings.Contains(v, "=") {
			in, err := ParseInstalled(v)
			if err != nil {
				return st, fmt.Errorf("--installed: %w", err)
			}
			st.Installed = append(st.Installed, CSV{Installed: in, From: "--installed " + v})
			continue
		}
		if err != nil {
			return st, fmt.Errorf("--installed %s: neither PKG=CSV nor a file of CSVs: %w", v, err)
		}
		csvs, err := ReadCSVs(v, data)
		if err != nil {
			return st, fmt.Errorf("--installed: %w", err)
		}
		st.Installed = append(st.Installed, csvs...)
	}
	return st, nil
}
