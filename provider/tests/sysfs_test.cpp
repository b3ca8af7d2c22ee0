// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device matching: any device with the sroce_abi attribute at our ABI
 * version is claimed, whatever its name; nothing else is.
 */
#include "sysfs.h"
#include "verbs_private.h"

#include <rdma/sroce-abi.h>

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

namespace
{

class SysfsTest : public ::testing::Test
{
      protected:
	SysfsTest()
	{
		char tmpl[] = "/tmp/sroce-sysfs-XXXXXX";

		dir_ = mkdtemp(tmpl);
		dev_ = {};
		snprintf(dev_.ibdev_path, sizeof(dev_.ibdev_path), "%s", dir_.c_str());
		snprintf(dev_.ibdev_name, sizeof(dev_.ibdev_name), "anyname0");
	}
	~SysfsTest() override
	{
		unlink((dir_ + "/" SROCE_SYSFS_DRIVER_ATTR).c_str());
		unlink((dir_ + "/fw_ver").c_str());
		rmdir(dir_.c_str());
	}

	void write_attr(const char *name, const std::string &text)
	{
		FILE *f = fopen((dir_ + "/" + name).c_str(), "w");

		ASSERT_NE(f, nullptr);
		fputs(text.c_str(), f);
		fclose(f);
	}

	std::string dir_;
	verbs_sysfs_dev dev_;
};

TEST(AbiVersion, ParsesDecimalNumbersOnly)
{
	uint32_t v = 0;

	EXPECT_TRUE(sroce::parse_abi_version("1", &v));
	EXPECT_EQ(v, 1u);
	EXPECT_TRUE(sroce::parse_abi_version("4294967295", &v));
	EXPECT_EQ(v, 4294967295u);
	EXPECT_FALSE(sroce::parse_abi_version("", &v));
	EXPECT_FALSE(sroce::parse_abi_version("1a", &v));
	EXPECT_FALSE(sroce::parse_abi_version(" 1", &v));
	EXPECT_FALSE(sroce::parse_abi_version("-1", &v));
	EXPECT_FALSE(sroce::parse_abi_version("4294967296", &v));
}

TEST_F(SysfsTest, DeviceWithOurAbiIsClaimedWhateverItsName)
{
	write_attr(SROCE_SYSFS_DRIVER_ATTR, std::to_string(SROCE_UVERBS_ABI_VERSION) + "\n");
	EXPECT_TRUE(sroce::match_device(&dev_));
}

TEST_F(SysfsTest, DeviceWithoutTheAttributeIsNotClaimed)
{
	EXPECT_FALSE(sroce::match_device(&dev_)); /* e.g. rxe0, siw0, mlx5_0 */
}

TEST_F(SysfsTest, DeviceWithAnotherAbiIsNotClaimed)
{
	write_attr(SROCE_SYSFS_DRIVER_ATTR, std::to_string(SROCE_UVERBS_ABI_VERSION + 1) + "\n");
	EXPECT_FALSE(sroce::match_device(&dev_));
}

TEST_F(SysfsTest, GarbledAttributeIsNotClaimed)
{
	write_attr(SROCE_SYSFS_DRIVER_ATTR, "one\n");
	EXPECT_FALSE(sroce::match_device(&dev_));
}

TEST_F(SysfsTest, ReadStripsOneNewlineAndRefusesWhatDoesNotFit)
{
	char buf[8];

	write_attr("fw_ver", "1.2.3\n");
	EXPECT_EQ(sroce::sysfs_read(dir_.c_str(), "fw_ver", buf, sizeof(buf)), 5);
	EXPECT_STREQ(buf, "1.2.3");
	write_attr("fw_ver", "1.2.3.4.5\n");
	EXPECT_EQ(sroce::sysfs_read(dir_.c_str(), "fw_ver", buf, sizeof(buf)), -1);
	EXPECT_EQ(sroce::sysfs_read(dir_.c_str(), "missing", buf, sizeof(buf)), -1);
}

} /* namespace */
