"""A mail server for the notification tests: aiosmtpd on 127.0.0.1, writing every message it
accepts to a directory, one pair of files per message: `<n>.eml`, the message as received, and
`<n>.json`, what the tests check (envelope recipients, subject, Message-ID, Content-Language,
the plain-text and HTML bodies decoded).

    python3 tests/mail/smtp_sink.py --port 2525 --dir /tmp/mail [--stall]

It writes `ready` into the directory once it listens. With `--stall`, it holds every message
after its data arrived and before answering DATA, writing `stalled` into the directory, until
a file `release` appears there; a client that goes away meanwhile never got an answer, so its
message is not accepted (aiosmtpd cancels the handler when the connection is lost), as a
real mail server drops a transaction whose client disconnected before the final reply.
"""

import argparse
import asyncio
import email
import email.policy
import itertools
import json
import os

from aiosmtpd.smtp import SMTP


class Sink:
    def __init__(self, directory, stall):
        self.directory = directory
        self.stall = stall
        self.numbers = itertools.count(1)

    def _path(self, name):
        return os.path.join(self.directory, name)

    async def handle_DATA(self, server, session, envelope):
        if self.stall:
            with open(self._path("stalled"), "w", encoding="utf-8") as f:
                f.write("stalled\n")
            while not os.path.exists(self._path("release")):
                await asyncio.sleep(0.05)
        if server.transport is None or server.transport.is_closing():
            return "421 the client went away"
        n = next(self.numbers)
        raw = envelope.original_content or envelope.content
        with open(self._path(f"{n}.eml"), "wb") as f:
            f.write(raw)
        message = email.message_from_bytes(raw, policy=email.policy.default)
        text = message.get_body(("plain",))
        html = message.get_body(("html",))
        parsed = {
            "rcpt_to": envelope.rcpt_tos,
            "from": str(message.get("From", "")),
            "to": str(message.get("To", "")),
            "subject": str(message.get("Subject", "")),
            "message_id": str(message.get("Message-ID", "")),
            "language": str(message.get("Content-Language", "")),
            "text": text.get_content() if text is not None else "",
            "html": html.get_content() if html is not None else "",
        }
        tmp = self._path(f".{n}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(parsed, f)
        os.replace(tmp, self._path(f"{n}.json"))
        return "250 OK accepted"


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True)
    parser.add_argument("--stall", action="store_true")
    args = parser.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    handler = Sink(args.dir, args.stall)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(
        lambda: SMTP(handler, enable_SMTPUTF8=True, hostname="sink.test"),
        host="127.0.0.1",
        port=args.port,
    )
    with open(os.path.join(args.dir, "ready"), "w", encoding="utf-8") as f:
        f.write("ready\n")
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
