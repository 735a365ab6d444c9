"""``tongits-server --help``: what a host reads before the first start."""

from __future__ import annotations

from tongits.server.cli import build_parser


def test_each_option_says_its_default_once_and_only_when_there_is_one() -> None:
    """An empty default printed as ``(default: )`` (six options: --data-dir, --tls-cert,
    --tls-key, --password-file, --public-address, --web-hosts), and --data-dir and
    --public-address, whose help says their default in words, said it twice."""
    text = " ".join(build_parser().format_help().split())
    assert "(default: )" not in text
    for option in ("--data-dir", "--public-address"):
        entry = text.partition(f" {option} {option.lstrip('-').replace('-', '_').upper()} ")[2]
        assert entry.partition(" --")[0].count("(default:") == 1, option
    assert "(default: 7777)" in text
