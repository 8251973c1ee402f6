// Loaded with "node --import": a server told to listen on a port alone
// listens on 127.0.0.1 only, and says on stderr which port it got
// ("listening on 127.0.0.1:PORT"), so that a test can give it port 0.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
	if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
		args.splice(1, typeof args[1] === "string" ? 1 : 0, "127.0.0.1");
	}
	this.once("listening", () => process.stderr.write(`listening on 127.0.0.1:${this.address().port}\n`));
	return listen.apply(this, args);
};
