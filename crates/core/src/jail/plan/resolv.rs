//! The session's resolv.conf: only the jail's DNS forwarder as nameserver
//! (the real resolvers get no route), the host's `search`/`domain`/
//! `options` lines kept. Pure; the sandbox binds the result over
//! /etc/resolv.conf.

use std::net::Ipv4Addr;

/// Lines kept from the host's resolv.conf, by their keyword.
const KEPT_KEYWORDS: &[&str] = &["search", "domain", "options"];

/// The resolv.conf of a jailed session.
pub fn session_resolv_conf(host_resolv_conf: &str, forwarder: Ipv4Addr) -> String {
    let mut out = String::from("# agent-sandbox egress jail: DNS goes through the jail's forwarder\n");
    for line in host_resolv_conf.lines() {
        let keyword = line.split_whitespace().next().unwrap_or("");
        if KEPT_KEYWORDS.contains(&keyword) {
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out.push_str(&format!("nameserver {forwarder}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_search_and_options_and_names_only_the_forwarder() {
        let host = "# generated\nnameserver 10.255.255.53\nnameserver 1.1.1.1\n\
                    search corp.example lab\noptions ndots:2 timeout:1\n\
                    domain corp.example\nsortlist 10.0.0.0/8\n  ; comment\n";
        assert_eq!(
            session_resolv_conf(host, Ipv4Addr::new(192, 0, 2, 53)),
            "# agent-sandbox egress jail: DNS goes through the jail's forwarder\n\
             search corp.example lab\n\
             options ndots:2 timeout:1\n\
             domain corp.example\n\
             nameserver 192.0.2.53\n"
        );
    }

    #[test]
    fn empty_host_file_still_names_the_forwarder() {
        assert_eq!(
            session_resolv_conf("", Ipv4Addr::new(198, 51, 100, 53)),
            "# agent-sandbox egress jail: DNS goes through the jail's forwarder\nnameserver 198.51.100.53\n"
        );
    }

    #[test]
    fn keyword_must_be_the_whole_first_word() {
        let out = session_resolv_conf("searchx evil\noptionsfoo\nnameserver 8.8.8.8\n", Ipv4Addr::new(192, 0, 2, 53));
        assert!(!out.contains("evil") && !out.contains("optionsfoo") && !out.contains("8.8.8.8"), "{out}");
    }
}
