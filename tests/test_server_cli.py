"""``tongits-server --help``: what a host reads before the first start."""

from __future__ import annotations

import pytest
from tongits.server.cli import build_parser, main


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


def test_a_password_on_the_command_line_is_refused_in_words(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``tongits-server --password pw`` was taken for ``--password-file pw`` (argparse takes
    a prefix of an option for it) and said only "[Errno 2] No such file or directory: 'pw'"."""
    with pytest.raises(SystemExit) as exit_:
        main(["--port", "0", "--password", "pw"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "never given on the command line" in err and "--password-file FILE" in err
    assert "Errno" not in err
