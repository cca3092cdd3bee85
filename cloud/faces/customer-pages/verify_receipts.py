import base64, hashlib, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

def canon(o): return json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

def check_sig(key, tag, msg):  # raises when the signature is not the key's
    text = tag + "\n" + canon({k: v for k, v in msg.items() if k != "sig"})
    Ed25519PublicKey.from_public_bytes(base64.b64decode(key)).verify(base64.b64decode(msg["sig"]), text.encode())

def verify(path, earlier=None):
    with open(path, encoding="utf-8") as f:
        header = json.loads(f.readline())
        check_sig(header["service_key"], "gatelink/receipts/v1", header)
        seq, prev = 0, header["genesis"]
        for text in f:
            line = json.loads(text); e = line["entry"]
            def fail(why): sys.exit(f"broken at entry {e['id']} (seq {line['seq']}): {why}")
            if line["seq"] != seq + 1: fail(f"it follows seq {seq}: entries are missing or moved")
            if line["prev"] != prev: fail("it does not follow the entry before it")
            if hashlib.sha256((prev + canon(e)).encode()).hexdigest() != line["hash"]: fail("its content does not match its hash")
            for msg, tag in [(e["ack"], "gatelink/ack/v1")] + [(r, "gatelink/position/v1") for r in e["reports"]]:
                try: msg and check_sig(header["device_keys"][msg["device_id"]], tag, msg)
                except Exception: fail(f"{tag} signature does not verify")
            seq, prev = line["seq"], line["hash"]
            if earlier and seq == earlier["seq"] and prev != earlier["hash"]: fail("the earlier export's entries were changed")
    if [seq, prev] != [header["head"]["seq"], header["head"]["hash"]]: sys.exit(f"broken after seq {seq}: entries are missing at the end")
    if earlier and (earlier["genesis"] != header["genesis"] or earlier["seq"] > seq): sys.exit("it does not extend the earlier export")
    return {"genesis": header["genesis"], "seq": seq, "hash": prev}

if __name__ == "__main__":
    before = verify(sys.argv[2]) if len(sys.argv) > 2 else None
    head = verify(sys.argv[1], before)
    print(f"{head['seq']} entries intact, head {head['hash']}")
