package edge

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies (GATEWAY_TRUSTED_PROXIES) whose
// X-Forwarded-For the gateway believes. Anyone can write that header, so it
// is read only when the connection comes from one of them, and then from
// the right: the first address not itself a trusted proxy is the client.
type Proxies struct {
	prefixes []netip.Prefix
}

// ParseProxies reads addresses and CIDR prefixes ("10.0.0.0/8", "::1").
func ParseProxies(entries []string) (*Proxies, error) {
	p := &Proxies{}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			pfx, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, fmt.Errorf("GATEWAY_TRUSTED_PROXIES: %q is not an address or CIDR prefix", e)
			}
			p.prefixes = append(p.prefixes, pfx.Masked())
			continue
		}
		addr, err := netip.ParseAddr(e)
		if err != nil {
			return nil, fmt.Errorf("GATEWAY_TRUSTED_PROXIES: %q is not an address or CIDR prefix", e)
		}
		p.prefixes = append(p.prefixes, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
	}
	return p, nil
}

func (p *Proxies) trusted(ip string) bool {
	if p == nil {
		return false
	}
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return false
	}
	addr = addr.Unmap()
	for _, pfx := range p.prefixes {
		if pfx.Contains(addr) {
			return true
		}
	}
	return false
}

// ClientIP is the address of whoever sent r: the peer, or, when the peer is
// a trusted proxy, the rightmost X-Forwarded-For address that is not.
func (p *Proxies) ClientIP(r *http.Request) string {
	peer := peerIP(r)
	if !p.trusted(peer) {
		return peer
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hops = append(hops, h)
			}
		}
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		addr, err := netip.ParseAddr(hops[i])
		if err != nil {
			// Garbage in the chain: stop at the last address we could trust.
			break
		}
		client = addr.Unmap().String()
		if !p.trusted(client) {
			break
		}
	}
	return client
}

func peerIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
